"""Where the data come from and who runs the work: from_generator over plain files, hand-written threads."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from worker.lint.findings import Finding
from worker.lint.program import PipelineProgram, call_line, is_same_or_submodule
from worker.lint.vocabulary import DYNAMIC_IMPORT_FUNCTIONS, FORK_FUNCTIONS


def generator_for_files(program: PipelineProgram) -> Iterator[Finding]:
    if not program.source_is_files:
        return
    for call in program.calls():
        if isinstance(call.func, ast.Attribute) and call.func.attr == "from_generator":
            yield Finding(
                "generator-for-files",
                call_line(call),
                "Dataset.from_generator pulls every element through Python, one at a time and under the GIL, "
                "but this exercise's data are ordinary files; read them with a built-in reader such as "
                "tf.data.TFRecordDataset, and interleave over the files to read several at once.",
            )


def hand_written_threading(program: PipelineProgram) -> Iterator[Finding]:
    """Imports of threading and process modules, their dynamic imports, and forks."""
    for node in program.all_nodes:
        statement = None
        if isinstance(node, ast.Import | ast.ImportFrom):
            statement = _forbidden_import(program, node)
        elif isinstance(node, ast.Call):
            statement = _dynamic_import_or_fork(program, node)
        if statement is not None and isinstance(node, ast.stmt | ast.expr):
            yield Finding(
                "hand-written-threading",
                node.lineno,
                f"{statement} brings in hand-written threads or processes; tf.data already runs input work in "
                "parallel and in the background, so use num_parallel_calls=tf.data.AUTOTUNE on map and interleave "
                "and end the pipeline with prefetch instead.",
            )


def _forbidden(program: PipelineProgram, module: str) -> bool:
    return any(is_same_or_submodule(module, forbidden) for forbidden in program.forbidden_modules)


def _forbidden_import(program: PipelineProgram, node: ast.Import | ast.ImportFrom) -> str | None:
    if isinstance(node, ast.Import):
        matched = [alias.name for alias in node.names if _forbidden(program, alias.name)]
        statement = "import " + ", ".join(matched)
    elif node.module and not node.level:
        matched = [alias.name for alias in node.names]
        if not _forbidden(program, node.module):
            # `from concurrent import futures`: the forbidden module is the imported name.
            matched = [name for name in matched if _forbidden(program, f"{node.module}.{name}")]
        statement = f"from {node.module} import " + ", ".join(matched)
    else:
        return None
    return statement if matched else None


def _dynamic_import_or_fork(program: PipelineProgram, call: ast.Call) -> str | None:
    name = program.qualified_name(call.func)
    if name in DYNAMIC_IMPORT_FUNCTIONS and call.args:
        module = call.args[0]
        if isinstance(module, ast.Constant) and isinstance(module.value, str) and _forbidden(program, module.value):
            return f"{name}({module.value!r})"
    elif name in FORK_FUNCTIONS:
        return f"{name}()"
    return None
