"""What a cache stores: the first epoch's random augmentation, replayed every epoch, is a pitfall."""

from __future__ import annotations

from collections.abc import Iterator

from worker.lint.findings import Finding
from worker.lint.program import PipelineProgram, call_line


def cache_after_augmentation(program: PipelineProgram) -> Iterator[Finding]:
    for call, receiver, method in program.dataset_steps():
        if method != "cache":
            continue
        random_map = program.latest_random_map(program.pipeline_ending_at(receiver))
        if random_map is not None:
            yield Finding(
                "cache-after-augmentation",
                call_line(call),
                f"cache() comes after map({program.function_label(random_map.call)}), which uses random ops, so "
                "the first epoch's random results are stored and replayed every epoch; cache before the random "
                "map and augment after the cache.",
            )
