"""What a mapped function does: Python that tf.data cannot run in a graph, and work that could run on batches."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from worker.lint.findings import Finding
from worker.lint.program import PipelineProgram, Step, call_line, mapped_argument
from worker.lint.vocabulary import (
    BATCH_METHODS,
    ORDER_AND_BUFFER_METHODS,
    OTHER_BATCHING_METHODS,
    PYTHON_FUNCTION_OPS,
)


def python_in_map(program: PipelineProgram) -> Iterator[Finding]:
    for call, _, method in program.dataset_steps():
        if method == "map":
            yield from _python_in_one_map(program, call)


def _python_in_one_map(program: PipelineProgram, call: ast.Call) -> Iterator[Finding]:
    argument = mapped_argument(call)
    if argument is None:
        return
    label = program.function_label(call)
    # A lambda's body is searched below with the rest of the traced code.
    for node in () if isinstance(argument, ast.Lambda) else ast.walk(argument):
        if isinstance(node, ast.Name | ast.Attribute) and program.qualified_name(node) in PYTHON_FUNCTION_OPS:
            yield _python_function(node.lineno, label, program.qualified_name(node) or "tf.py_function")
    function = program.resolve_callable(argument)
    if function is None:
        return
    for node in program.traced_nodes(function):
        if not isinstance(node, ast.Call):
            continue
        name = program.qualified_name(node.func)
        if name in PYTHON_FUNCTION_OPS:
            yield _python_function(call_line(node), label, name or "tf.py_function")
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "numpy" and not node.args:
            yield Finding(
                "python-in-map",
                call_line(node),
                f".numpy() inside map({label}) cannot work: the mapped function is traced into a graph, where "
                "tensors have no NumPy value; keep the work in TensorFlow ops.",
            )
        elif isinstance(node.func, ast.Name) and node.func.id == "print":
            yield Finding(
                "python-in-map",
                call_line(node),
                f"print() inside map({label}) runs only once, while the function is traced, not once per "
                "element; use tf.print to see values while the pipeline runs.",
            )


def _python_function(line: int, label: str, op_name: str) -> Finding:
    return Finding(
        "python-in-map",
        line,
        f"{op_name} inside map({label}) runs Python for every element, holding the GIL, so tf.data can "
        "neither optimise it nor really run it in parallel; express the work with TensorFlow ops instead.",
    )


def map_before_batch(program: PipelineProgram) -> Iterator[Finding]:
    for _, receiver, method in program.dataset_steps():
        if method in BATCH_METHODS:
            yield from _maps_before_one_batch(program, method, program.pipeline_ending_at(receiver))


def _maps_before_one_batch(program: PipelineProgram, method: str, earlier: Step | None) -> Iterator[Finding]:
    maps_on_elements: list[Step] = []
    for step in earlier.walk_back() if earlier is not None else ():
        if step.method in BATCH_METHODS or step.method in OTHER_BATCHING_METHODS:
            return  # These maps already see whole batches.
        if step.method == "map":
            maps_on_elements.append(step)
        elif step.method not in ORDER_AND_BUFFER_METHODS:
            break
    for step in maps_on_elements:
        function = program.mapped_function(step)
        advice = program.batching_advice(function) if function is not None else None
        if advice is None:
            # Maps before this one cannot move past it to the batch, so batching first is no simple fix.
            return
        if advice == "restructure":
            continue
        label = program.function_label(step.call)
        if advice == "parse":
            message = (
                f"map({label}) parses one serialized record at a time with tf.io.parse_single_example before "
                f"{method}(); batch the records first and parse each whole batch with tf.io.parse_example."
            )
        else:
            message = (
                f"map({label}) only does element-wise work, yet it runs once per element because it comes "
                f"before {method}(); call {method}() first and map the same function over whole batches."
            )
        yield Finding("map-before-batch", call_line(step.call), message)
