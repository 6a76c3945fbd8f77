"""Whether input work overlaps: map and interleave on several cores, and a final prefetch."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from worker.lint.findings import Finding
from worker.lint.program import PipelineProgram, Step, call_line
from worker.lint.vocabulary import DATASET_METHODS, PARALLEL_CALLS_POSITION


def no_parallel_calls(program: PipelineProgram) -> Iterator[Finding]:
    for call, _, method in program.dataset_steps():
        if method not in PARALLEL_CALLS_POSITION or _parallel_calls_given(call, method):
            continue
        label = program.function_label(call)
        if method == "map":
            message = (
                f"map({label}) processes one element at a time on a single thread; pass "
                "num_parallel_calls=tf.data.AUTOTUNE so tf.data runs it on several CPU cores at once."
            )
        else:
            message = (
                f"interleave({label}) reads its inputs one after another on a single thread; pass "
                "num_parallel_calls=tf.data.AUTOTUNE so several files are read at the same time."
            )
        yield Finding("no-parallel-calls", call_line(call), message)


def _parallel_calls_given(call: ast.Call, method: str) -> bool:
    """num_parallel_calls set to something other than None, or possibly so (in *args or **options)."""
    position = PARALLEL_CALLS_POSITION[method]
    setting: ast.expr | None = call.args[position] if len(call.args) > position else None
    if any(isinstance(argument, ast.Starred) for argument in call.args[: position + 1]):
        return True
    for keyword in call.keywords:
        if keyword.arg is None:
            return True  # **options may hold it; we cannot tell.
        if keyword.arg == "num_parallel_calls":
            setting = keyword.value
    return setting is not None and not (isinstance(setting, ast.Constant) and setting.value is None)


def no_final_prefetch(program: PipelineProgram) -> Iterator[Finding]:
    """Each pipeline a top-level function returns should end with prefetch."""
    returned_pipelines: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.Return, Step]] = []
    for function in program.all_nodes:
        if not (
            isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
            and program.scope_of[function] is program.tree
            and not program.is_passed_as_value(function)
        ):
            continue
        for statement in program.returns_of(function):
            returned = statement.value
            # `return train, validation` hands back two pipelines; each should end with prefetch.
            elements = returned.elts if isinstance(returned, ast.Tuple | ast.List) else [returned]
            for element in elements:
                last = program.pipeline_ending_at(element) if element is not None else None
                if last is not None:
                    returned_pipelines.append((function, statement, last))
    # Only now, with every returned pipeline traced, is it known which helpers others extend.
    for function, statement, last in returned_pipelines:
        if function in program.extended_helpers or last.method == "prefetch":
            continue
        methods = {step.method for step in last.walk_back()}
        if methods.isdisjoint(DATASET_METHODS):
            continue  # Only filter-like steps: too little to be sure this is a dataset.
        if "prefetch" in methods:
            message = (
                f"{function.name} applies {last.method}() after prefetch(), so that work no longer "
                "overlaps with the training step; make .prefetch(tf.data.AUTOTUNE) the last step."
            )
        else:
            message = (
                f"{function.name} returns its dataset without .prefetch(...), so preparing the next "
                "batch cannot overlap with the training step; end the pipeline with .prefetch(tf.data.AUTOTUNE)."
            )
        yield Finding("no-final-prefetch", statement.lineno, message)
