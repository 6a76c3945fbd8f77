"""What the linter reports: one finding per pitfall and line, and the pitfalls it knows."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    rule: str
    line: int
    message: str

    def as_dict(self) -> dict[str, object]:
        return {"rule": self.rule, "line": self.line, "message": self.message}


RULES: dict[str, str] = {
    "generator-for-files": "from_generator used to read ordinary files",
    "python-in-map": "Python code inside a mapped function",
    "no-final-prefetch": "Pipeline does not end with prefetch",
    "no-parallel-calls": "map or interleave without num_parallel_calls",
    "hand-written-threading": "Hand-written threads or processes instead of tf.data",
    "cache-after-augmentation": "cache() after random augmentation",
    "map-before-batch": "Vectorizable map before batch",
    "schema-default": "A schema default stands in for a missing feature",
    "ignore-errors-before-parse": "ignore_errors() before the map that parses",
}
