"""Records that may not parse: a schema whose defaults let a broken record through, and an
ignore_errors() placed where the parse's errors never reach it."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from worker.lint.findings import Finding
from worker.lint.program import PipelineProgram, Step, call_line
from worker.lint.vocabulary import RECORD_PARSING_OPS, SCHEMA_FEATURES


def schema_default(program: PipelineProgram) -> Iterator[Finding]:
    for call in program.calls():
        name = program.qualified_name(call.func)
        if name not in SCHEMA_FEATURES or not any(keyword.arg == "default_value" for keyword in call.keywords):
            continue
        yield Finding(
            "schema-default",
            call_line(call),
            f"{name.rsplit('.', 1)[-1]}(..., default_value=...) fills in a feature a record lacks, so a broken"
            " record passes as an example nobody wrote; without the default it fails to parse, and the pipeline"
            " can skip it and count it.",
        )


def ignore_errors_before_parse(program: PipelineProgram) -> Iterator[Finding]:
    steps = [
        step
        for call, _, method in program.dataset_steps()
        if method in ("map", "ignore_errors") and (step := program.pipeline_ending_at(call)) is not None
    ]
    ignores = [step for step in steps if step.method == "ignore_errors"]
    for parse in (step for step in steps if step.method == "map" and _parses_records(program, step)):
        before = [step for step in parse.walk_back() if step.method == "ignore_errors"]
        after = [ignore for ignore in ignores if any(step is parse for step in ignore.walk_back())]
        if before and not after:
            yield Finding(
                "ignore-errors-before-parse",
                call_line(before[0].call),
                f"ignore_errors() comes before map({program.function_label(parse.call)}), which parses the"
                " records, so it never sees the parse's errors and one bad record ends the epoch; put"
                " ignore_errors() after the map that parses.",
            )


def _parses_records(program: PipelineProgram, step: Step) -> bool:
    function = program.mapped_function(step)
    if function is None:
        return False
    return any(
        isinstance(node, ast.Call) and program.qualified_name(node.func) in RECORD_PARSING_OPS
        for node in program.traced_nodes(function)
    )
