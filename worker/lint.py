"""Static advice on a learner's tf.data pipeline: the course's pitfalls, found in the source text.

Grading measures whether a pipeline is correct and how fast it is, but a slow score alone does not tell
a learner *why*. This module reads the submitted code (never runs it, never imports TensorFlow) and
points at the lines that show one of the pitfalls the course teaches: from_generator for plain files,
Python inside map, no final prefetch, sequential map/interleave, hand-written threads, caching after
random augmentation, and element-wise maps that could run on whole batches.

Python cannot tell us which objects are datasets, so the analysis is deliberately syntactic: any
`.map(`, `.batch(`, `.cache(`, ... method call is taken to be a dataset step, a pipeline is followed
through fluent chains and through reassignment of local names, and mapped functions are resolved when
they are a lambda, a def in the module (or in the enclosing function), or a functools.partial of one.
Whatever cannot be resolved produces no advice rather than a guess: a finding is shown to a learner,
so a false alarm costs more than a missed hint.
"""

from __future__ import annotations

import ast
import warnings
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal


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
}

_DATASET_METHODS = frozenset({"map", "batch", "padded_batch", "cache", "prefetch", "interleave", "shuffle", "unbatch"})
_BATCH_METHODS = frozenset({"batch", "padded_batch"})
# Further steps followed through a pipeline because they bound how far a map can be moved: after these,
# elements are batches or windows; the rest change which elements there are or what they look like.
_OTHER_BATCHING_METHODS = frozenset(
    {"ragged_batch", "bucket_by_sequence_length", "rebatch", "window", "group_by_window"}
)
_ELEMENT_CHANGING_METHODS = frozenset({"filter", "flat_map", "scan", "enumerate", "zip", "take_while", "unique"})
# Steps a map can be moved past without changing what the pipeline yields.
_ORDER_AND_BUFFER_METHODS = frozenset({"shuffle", "cache", "prefetch"})
# Where num_parallel_calls sits among the positional parameters of Dataset.map and Dataset.interleave.
_PARALLEL_CALLS_POSITION = {"map": 1, "interleave": 3}

_ALWAYS_FORBIDDEN_MODULES = ("threading", "_thread", "multiprocessing", "concurrent.futures", "subprocess")
# Not modules, but matched like them so that `from os import fork` and `os.fork()` are both caught.
_FORK_FUNCTIONS = ("os.fork", "os.forkpty")
_DYNAMIC_IMPORT_FUNCTIONS = frozenset({"__import__", "importlib.import_module", "importlib.__import__"})

_PYTHON_FUNCTION_OPS = frozenset(
    {
        "tf.py_function",
        "tf.numpy_function",
        "tf.py_func",
        "tf.compat.v1.py_func",
        "tf.compat.v1.py_function",
        "tf.compat.v1.numpy_function",
    }
)
_RANDOM_OP_PREFIXES = (
    "tf.image.random_",
    "tf.image.stateless_random_",
    "tf.random.",
    "tf.keras.layers.Random",
    "tf.keras.layers.experimental.preprocessing.Random",
    "keras.layers.Random",
)
_PARSE_SINGLE_EXAMPLE = "tf.io.parse_single_example"
# Ops that treat every value on its own, so they give the same result on a batch as on each element.
_ELEMENTWISE_OPS = frozenset(
    {
        "tf.cast",
        "tf.add",
        "tf.subtract",
        "tf.multiply",
        "tf.divide",
        "tf.truediv",
        "tf.negative",
        "tf.abs",
        "tf.exp",
        "tf.sqrt",
        "tf.square",
        "tf.pow",
        "tf.maximum",
        "tf.minimum",
        "tf.round",
        "tf.sign",
        "tf.sigmoid",
        "tf.tanh",
        "tf.clip_by_value",
        "tf.one_hot",
        "tf.nn.relu",
        "tf.nn.sigmoid",
        "tf.nn.tanh",
        "dict",
    }
)
# tf.math also holds reductions and scans, whose result depends on the batch around each element.
_NON_ELEMENTWISE_MATH_PREFIXES = (
    "tf.math.reduce_",
    "tf.math.cum",
    "tf.math.arg",
    "tf.math.segment_",
    "tf.math.unsorted_segment_",
    "tf.math.bincount",
    "tf.math.count_nonzero",
    "tf.math.confusion_matrix",
    "tf.math.l2_normalize",
    "tf.math.top_k",
    "tf.math.in_top_k",
)
# Statements and expressions that a batch would change the meaning of, or that we cannot judge.
_NOT_VECTORIZABLE_NODES = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.Try,
    ast.TryStar,
    ast.With,
    ast.AsyncWith,
    ast.Match,
    ast.IfExp,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.Await,
    ast.Yield,
    ast.YieldFrom,
    ast.Global,
    ast.Nonlocal,
    ast.Starred,
    # `and`, `or` and `not` ask a tensor for one truth value, which a batch does not have.
    ast.BoolOp,
)

# Real pipelines have a handful of steps; the caps keep hostile inputs from costing quadratic time.
_MAX_STEPS_WALKED_BACK = 256
_MAX_TRACE_HOPS = 100_000
_MAX_RESOLVE_DEPTH = 16
_MAX_LABEL_LENGTH = 40

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
_ScopeNode = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
_SCOPE_TYPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_SHARED_LEAF_TYPES = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
_Position = tuple[int, int]
# "restructure": moves values around without computing, so it may go either side of the batch.
_BatchingAdvice = Literal["parse", "elementwise", "restructure"]


def lint_pipeline_code(code: str, *, source_is_files: bool, forbidden_imports: Sequence[str] = ()) -> list[Finding]:
    """Findings for the pitfalls in `code`, sorted by (line, rule), at most one per rule and line."""
    try:
        with warnings.catch_warnings():
            # Learners' code often has "\d"-style escapes; their SyntaxWarnings are not ours to show.
            warnings.simplefilter("ignore")
            tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return []
    try:
        findings = _PipelineLinter(tree, source_is_files, forbidden_imports).run()
    except Exception:
        # Advice is optional and grading must go on: a linter bug on odd input costs the hints, not the grade.
        return []
    first_per_rule_and_line: dict[tuple[int, str], Finding] = {}
    for finding in findings:
        first_per_rule_and_line.setdefault((finding.line, finding.rule), finding)
    return [first_per_rule_and_line[key] for key in sorted(first_per_rule_and_line)]


@dataclass(frozen=True, eq=False)
class _Step:
    """One dataset method call in a pipeline, linked to the step before it (shared between branches).

    Compared and hashed by identity: a field-wise hash would walk the whole pipeline every time.
    """

    call: ast.Call
    method: str
    previous: _Step | None

    def walk_back(self) -> Iterator[_Step]:
        step: _Step | None = self
        for _ in range(_MAX_STEPS_WALKED_BACK):
            if step is None:
                return
            yield step
            step = step.previous


class _PipelineLinter:
    def __init__(self, tree: ast.Module, source_is_files: bool, forbidden_imports: Sequence[str]) -> None:
        self._tree = tree
        self._source_is_files = source_is_files
        requested = [str(module).strip() for module in forbidden_imports]
        self._forbidden_modules = tuple(dict.fromkeys([*_ALWAYS_FORBIDDEN_MODULES, *_FORK_FUNCTIONS, *requested]))
        self._findings: list[Finding] = []

        self._scope_of: dict[ast.AST, _ScopeNode] = {}
        self._all_nodes: list[ast.AST] = []
        self._name_loads: dict[str, list[ast.Name]] = {}
        self._callees: set[ast.expr] = set()
        self._returns: dict[_ScopeNode, list[ast.Return]] = {}
        self._index_scopes()
        self._import_aliases = self._collect_import_aliases()
        self._definitions = self._collect_definitions()
        self._assignments = self._collect_assignments()
        self._parameters = self._collect_parameters()

        self._chain_memo: dict[ast.expr, _Step | None] = {}
        self._reachable_memo: dict[_FunctionNode, list[_FunctionNode]] = {}
        self._random_memo: dict[_FunctionNode, bool] = {}
        self._batching_memo: dict[_FunctionNode, _BatchingAdvice | None] = {}
        self._mapped_function_memo: dict[ast.Call, _FunctionNode | None] = {}
        self._latest_random_map_memo: dict[_Step, _Step | None] = {}
        # Functions whose returned dataset some pipeline continues from; their own return needs no prefetch.
        self._extended_helpers: set[_FunctionNode] = set()

    # ----- indexing -------------------------------------------------------------------------------------

    def _index_scopes(self) -> None:
        pending: list[tuple[ast.AST, _ScopeNode]] = [(self._tree, self._tree)]
        while pending:
            node, scope = pending.pop()
            self._all_nodes.append(node)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self._name_loads.setdefault(node.id, []).append(node)
            elif isinstance(node, ast.Call):
                self._callees.add(node.func)
            elif isinstance(node, ast.Return):
                self._returns.setdefault(scope, []).append(node)
            inner_scope = node if isinstance(node, _SCOPE_TYPES) else scope
            for child in ast.iter_child_nodes(node):
                # Contexts and operators are shared singletons that carry nothing to analyse.
                if not isinstance(child, _SHARED_LEAF_TYPES):
                    self._scope_of[child] = inner_scope
                    pending.append((child, inner_scope))
        self._all_nodes.sort(key=_start_position)

    def _collect_import_aliases(self) -> dict[str, str]:
        # `tf` means TensorFlow even where the learner forgot the import line.
        aliases: dict[str, str] = {"tf": "tf"}
        for node in self._all_nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        aliases[alias.asname] = _canonical(alias.name)
                    else:
                        root = alias.name.partition(".")[0]
                        aliases[root] = _canonical(root)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        aliases[alias.asname or alias.name] = _canonical(f"{node.module}.{alias.name}")
        return aliases

    def _collect_definitions(self) -> dict[_ScopeNode, dict[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
        definitions: dict[_ScopeNode, dict[str, ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        for node in self._all_nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                definitions.setdefault(self._scope_of[node], {})[node.name] = node
        return definitions

    def _collect_assignments(self) -> dict[_ScopeNode, dict[str, tuple[list[_Position], list[ast.expr]]]]:
        """For each scope and name, the values assigned to it, in the order the assignments finish."""
        found: list[tuple[_Position, _ScopeNode, str, ast.expr]] = []
        for node in self._all_nodes:
            pairs: list[tuple[ast.expr, ast.expr]] = []
            if isinstance(node, ast.Assign):
                pairs = [(target, node.value) for target in node.targets]
            elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None:
                pairs = [(node.target, node.value)]
            for target, value in pairs:
                for name, assigned in _unpack_assignment(target, value):
                    found.append((_end_position(node), self._scope_of[node], name, assigned))
        found.sort(key=lambda entry: entry[0])
        assignments: dict[_ScopeNode, dict[str, tuple[list[_Position], list[ast.expr]]]] = {}
        for position, scope, name, value in found:
            positions, values = assignments.setdefault(scope, {}).setdefault(name, ([], []))
            positions.append(position)
            values.append(value)
        return assignments

    def _collect_parameters(self) -> dict[_ScopeNode, set[str]]:
        parameters: dict[_ScopeNode, set[str]] = {}
        for node in self._all_nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                arguments = node.args
                every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
                every += [extra for extra in (arguments.vararg, arguments.kwarg) if extra is not None]
                parameters[node] = {argument.arg for argument in every}
        return parameters

    # ----- names ----------------------------------------------------------------------------------------

    def _qualified_name(self, expression: ast.expr) -> str | None:
        """`tf.image.resize` for `t.image.resize` after `import tensorflow as t`; None for non-dotted names."""
        attributes: list[str] = []
        while isinstance(expression, ast.Attribute):
            attributes.append(expression.attr)
            expression = expression.value
        if not isinstance(expression, ast.Name):
            return None
        root = self._import_aliases.get(expression.id, expression.id)
        return _canonical(".".join([root, *reversed(attributes)]))

    def _is_module_path(self, expression: ast.expr) -> bool:
        while isinstance(expression, ast.Attribute):
            expression = expression.value
        return isinstance(expression, ast.Name) and expression.id in self._import_aliases

    def _is_dataset_method_call(self, node: ast.AST, also: frozenset[str] = frozenset()) -> bool:
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and (node.func.attr in _DATASET_METHODS or node.func.attr in also)
            # tf.random.shuffle and numpy's random.shuffle are functions in a module, not dataset steps.
            and not self._is_module_path(node.func.value)
        )

    def _enclosing_scopes(self, node: ast.AST) -> Iterator[_ScopeNode]:
        scope = self._scope_of.get(node)
        while scope is not None:
            # A class body's names are not visible from the functions inside it.
            if not isinstance(scope, ast.ClassDef):
                yield scope
            scope = self._scope_of.get(scope)

    def _resolve_definition(self, name: ast.Name) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        for scope in self._enclosing_scopes(name):
            definition = self._definitions.get(scope, {}).get(name.id)
            if definition is not None:
                return definition
            if name.id in self._parameters.get(scope, ()):
                return None
        return None

    def _assigned_value(self, name: ast.Name) -> ast.expr | None:
        """The value `name` was last given before this use, in its own scope or (if free) an enclosing one."""
        for depth, scope in enumerate(self._enclosing_scopes(name)):
            positions, values = self._assignments.get(scope, {}).get(name.id, ([], []))
            # A free variable is read when the function runs, after the whole enclosing scope has run.
            assigned_before = len(values) if depth > 0 else bisect_right(positions, _start_position(name))
            if assigned_before:
                return values[assigned_before - 1]
            if values or name.id in self._parameters.get(scope, ()):
                # Bound here only later, or by the caller: nothing we can follow.
                return None
        return None

    def _resolve_callable(self, expression: ast.expr) -> _FunctionNode | None:
        """The lambda or def that `expression` (a name, lambda or functools.partial) stands for."""
        for _ in range(_MAX_RESOLVE_DEPTH):
            if isinstance(expression, ast.Lambda):
                return expression
            if isinstance(expression, ast.Name):
                definition = self._resolve_definition(expression)
                if definition is not None:
                    return definition
                assigned = self._assigned_value(expression)
                if assigned is None:
                    return None
                expression = assigned
            elif (
                isinstance(expression, ast.Call)
                and self._qualified_name(expression.func) == "functools.partial"
                and expression.args
            ):
                expression = expression.args[0]
            else:
                return None
        return None

    # ----- pipelines ------------------------------------------------------------------------------------

    def _pipeline_ending_at(self, expression: ast.expr) -> _Step | None:
        """The dataset steps that produce `expression`, found by walking back through receivers and names."""
        visited: list[ast.expr] = []
        helpers_entered: set[_FunctionNode] = set()
        base: _Step | None = None
        current: ast.expr | None = expression
        for _ in range(_MAX_TRACE_HOPS):
            if current is None:
                break
            if current in self._chain_memo:
                base = self._chain_memo[current]
                break
            visited.append(current)
            current = self._feeding_expression(current, helpers_entered)
        step = base
        for node in reversed(visited):
            if isinstance(node, ast.Call) and self._is_dataset_method_call(
                node, also=_OTHER_BATCHING_METHODS | _ELEMENT_CHANGING_METHODS
            ):
                step = _Step(node, _method_name(node), step)
            self._chain_memo[node] = step
        return self._chain_memo.get(expression)

    def _feeding_expression(self, expression: ast.expr, helpers_entered: set[_FunctionNode]) -> ast.expr | None:
        """The expression whose dataset `expression` is built from, or None where the pipeline starts."""
        if isinstance(expression, ast.Name):
            return self._assigned_value(expression)
        if not isinstance(expression, ast.Call):
            return None
        if isinstance(expression.func, ast.Attribute):
            # A constructor such as tf.data.TFRecordDataset(...) starts the pipeline.
            return None if self._is_module_path(expression.func.value) else expression.func.value
        if isinstance(expression.func, ast.Name):
            # A pipeline built by a helper function of the learner's continues into that helper.
            helper = self._resolve_callable(expression.func)
            if helper is None or helper in helpers_entered:
                return None
            helpers_entered.add(helper)
            self._extended_helpers.add(helper)
            if isinstance(helper, ast.Lambda):
                return helper.body
            returned = [node.value for node in self._returns_of(helper) if node.value is not None]
            return returned[-1] if returned else None
        return None

    def _returns_of(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Return]:
        return self._returns.get(function, [])

    # ----- mapped functions -----------------------------------------------------------------------------

    def _own_nodes(self, function: _FunctionNode) -> Iterator[ast.AST]:
        """Nodes of the function body that run when it is traced: not nested defs, not py_function's Python."""
        pending: list[ast.AST] = [function.body] if isinstance(function, ast.Lambda) else list(function.body)
        while pending:
            node = pending.pop()
            yield node
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            skipped = self._python_function_argument(node) if isinstance(node, ast.Call) else None
            pending.extend(child for child in ast.iter_child_nodes(node) if child is not skipped)

    def _python_function_argument(self, call: ast.Call) -> ast.expr | None:
        """The Python callable handed to tf.py_function: it runs eagerly, so its insides are no map pitfall."""
        if self._qualified_name(call.func) not in _PYTHON_FUNCTION_OPS:
            return None
        for keyword in call.keywords:
            if keyword.arg == "func":
                return keyword.value
        return call.args[0] if call.args else None

    def _reachable_functions(self, function: _FunctionNode) -> list[_FunctionNode]:
        """The mapped function and the learner's functions it uses, all traced into the same graph."""
        if function in self._reachable_memo:
            return self._reachable_memo[function]
        reachable = [function]
        index = 0
        while index < len(reachable):
            for node in self._own_nodes(reachable[index]):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    used = self._resolve_callable(node)
                    if used is not None and used not in reachable:
                        reachable.append(used)
            index += 1
        self._reachable_memo[function] = reachable
        return reachable

    def _traced_nodes(self, function: _FunctionNode) -> Iterator[ast.AST]:
        for reachable in self._reachable_functions(function):
            yield from self._own_nodes(reachable)

    def _uses_random_ops(self, function: _FunctionNode) -> bool:
        if function not in self._random_memo:
            self._random_memo[function] = any(
                isinstance(node, ast.Call) and self._is_random_call(node) for node in self._traced_nodes(function)
            )
        return self._random_memo[function]

    def _is_random_call(self, call: ast.Call) -> bool:
        name = self._qualified_name(call.func)
        if name is not None and name.startswith(_RANDOM_OP_PREFIXES):
            return True
        if isinstance(call.func, ast.Name):
            # flip = tf.keras.layers.RandomFlip(...) at module level, then flip(image) in the mapped function.
            layer = self._assigned_value(call.func)
            if layer is not None and not isinstance(layer, ast.Lambda):
                return any(
                    isinstance(node, ast.Call)
                    and (self._qualified_name(node.func) or "").startswith(_RANDOM_OP_PREFIXES)
                    for node in ast.walk(layer)
                )
        return False

    def _batching_advice(self, function: _FunctionNode) -> _BatchingAdvice | None:
        """Why the function could run on whole batches instead, or None if it (maybe) cannot."""
        if function not in self._batching_memo:
            self._batching_memo[function] = self._judge_vectorizable(function)
        return self._batching_memo[function]

    def _judge_vectorizable(self, function: _FunctionNode) -> _BatchingAdvice | None:
        reachable = self._reachable_functions(function)
        parses_single_examples = False
        does_elementwise_work = False
        for node in self._traced_nodes(function):
            if isinstance(node, _NOT_VECTORIZABLE_NODES):
                return None
            if isinstance(node, ast.Subscript):
                # parsed["label"] picks a feature either way; x[0] picks a value, or a whole example of a batch.
                if not (isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
                    return None
            elif isinstance(node, ast.Attribute) and node.attr == "shape":
                return None
            elif isinstance(node, ast.BinOp):
                if isinstance(node.op, ast.MatMult):
                    return None
                does_elementwise_work = True
            elif isinstance(node, ast.UnaryOp):
                if isinstance(node.op, ast.Not):
                    return None
                does_elementwise_work = True
            elif isinstance(node, ast.Call):
                name = self._qualified_name(node.func)
                if name == _PARSE_SINGLE_EXAMPLE:
                    parses_single_examples = True
                elif name is not None and _is_elementwise_op(name):
                    does_elementwise_work = does_elementwise_work or name != "dict"
                elif not (isinstance(node.func, ast.Name) and self._resolve_callable(node.func) in reachable):
                    return None
        if parses_single_examples:
            return "parse"
        return "elementwise" if does_elementwise_work else "restructure"

    # ----- rules ----------------------------------------------------------------------------------------

    def run(self) -> list[Finding]:
        for node in self._all_nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                self._check_import(node)
            elif isinstance(node, ast.Call):
                self._check_call(node)
        self._check_final_prefetch()
        return self._findings

    def _report(self, rule: str, line: int, message: str) -> None:
        self._findings.append(Finding(rule=rule, line=line, message=message))

    def _check_call(self, call: ast.Call) -> None:
        name = self._qualified_name(call.func)
        self._check_dynamic_import_or_fork(call, name)
        if isinstance(call.func, ast.Attribute) and call.func.attr == "from_generator" and self._source_is_files:
            self._report(
                "generator-for-files",
                _call_line(call),
                "Dataset.from_generator pulls every element through Python, one at a time and under the GIL, "
                "but this exercise's data are ordinary files; read them with a built-in reader such as "
                "tf.data.TFRecordDataset, and interleave over the files to read several at once.",
            )
        if not (self._is_dataset_method_call(call) and isinstance(call.func, ast.Attribute)):
            return
        method = call.func.attr
        if method in _PARALLEL_CALLS_POSITION:
            self._check_parallel_calls(call, method)
        if method == "map":
            self._check_python_in_map(call)
        elif method == "cache":
            self._check_cache_after_augmentation(call, self._pipeline_ending_at(call.func.value))
        elif method in _BATCH_METHODS:
            self._check_map_before_batch(method, self._pipeline_ending_at(call.func.value))

    def _check_import(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            matched = [alias.name for alias in node.names if self._is_forbidden_module(alias.name)]
            statement = "import " + ", ".join(matched)
        elif node.module and not node.level:
            matched = [alias.name for alias in node.names]
            if not self._is_forbidden_module(node.module):
                # `from concurrent import futures`: the forbidden module is the imported name.
                matched = [name for name in matched if self._is_forbidden_module(f"{node.module}.{name}")]
            statement = f"from {node.module} import " + ", ".join(matched)
        else:
            return
        if matched:
            self._report_threading(node.lineno, statement)

    def _check_dynamic_import_or_fork(self, call: ast.Call, name: str | None) -> None:
        if name in _DYNAMIC_IMPORT_FUNCTIONS and call.args:
            module = call.args[0]
            if (
                isinstance(module, ast.Constant)
                and isinstance(module.value, str)
                and self._is_forbidden_module(module.value)
            ):
                self._report_threading(call.lineno, f"{name}({module.value!r})")
        elif name in _FORK_FUNCTIONS:
            self._report_threading(call.lineno, f"{name}()")

    def _is_forbidden_module(self, module: str) -> bool:
        return any(_is_same_or_submodule(module, forbidden) for forbidden in self._forbidden_modules)

    def _report_threading(self, line: int, statement: str) -> None:
        self._report(
            "hand-written-threading",
            line,
            f"{statement} brings in hand-written threads or processes; tf.data already runs input work in "
            "parallel and in the background, so use num_parallel_calls=tf.data.AUTOTUNE on map and interleave "
            "and end the pipeline with prefetch instead.",
        )

    def _check_parallel_calls(self, call: ast.Call, method: str) -> None:
        position = _PARALLEL_CALLS_POSITION[method]
        setting: ast.expr | None = call.args[position] if len(call.args) > position else None
        if any(isinstance(argument, ast.Starred) for argument in call.args[: position + 1]):
            return
        for keyword in call.keywords:
            if keyword.arg is None:
                return  # **options may hold it; we cannot tell.
            if keyword.arg == "num_parallel_calls":
                setting = keyword.value
        if setting is not None and not (isinstance(setting, ast.Constant) and setting.value is None):
            return
        label = self._function_label(call)
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
        self._report("no-parallel-calls", _call_line(call), message)

    def _check_python_in_map(self, call: ast.Call) -> None:
        argument = _mapped_argument(call)
        if argument is None:
            return
        label = self._function_label(call)
        # A lambda's body is searched below with the rest of the traced code.
        for node in () if isinstance(argument, ast.Lambda) else ast.walk(argument):
            if isinstance(node, ast.Name | ast.Attribute) and self._qualified_name(node) in _PYTHON_FUNCTION_OPS:
                self._report_python_function(node.lineno, label, self._qualified_name(node) or "tf.py_function")
        function = self._resolve_callable(argument)
        if function is None:
            return
        for node in self._traced_nodes(function):
            if not isinstance(node, ast.Call):
                continue
            name = self._qualified_name(node.func)
            if name in _PYTHON_FUNCTION_OPS:
                self._report_python_function(_call_line(node), label, name or "tf.py_function")
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "numpy" and not node.args:
                self._report(
                    "python-in-map",
                    _call_line(node),
                    f".numpy() inside map({label}) cannot work: the mapped function is traced into a graph, where "
                    "tensors have no NumPy value; keep the work in TensorFlow ops.",
                )
            elif isinstance(node.func, ast.Name) and node.func.id == "print":
                self._report(
                    "python-in-map",
                    _call_line(node),
                    f"print() inside map({label}) runs only once, while the function is traced, not once per "
                    "element; use tf.print to see values while the pipeline runs.",
                )

    def _report_python_function(self, line: int, label: str, op_name: str) -> None:
        self._report(
            "python-in-map",
            line,
            f"{op_name} inside map({label}) runs Python for every element, holding the GIL, so tf.data can "
            "neither optimise it nor really run it in parallel; express the work with TensorFlow ops instead.",
        )

    def _check_cache_after_augmentation(self, cache_call: ast.Call, earlier: _Step | None) -> None:
        random_map = self._latest_random_map(earlier)
        if random_map is not None:
            self._report(
                "cache-after-augmentation",
                _call_line(cache_call),
                f"cache() comes after map({self._function_label(random_map.call)}), which uses random ops, so the "
                "first epoch's random results are stored and replayed every epoch; cache before the random "
                "map and augment after the cache.",
            )

    def _latest_random_map(self, step: _Step | None) -> _Step | None:
        """The last map with random ops at or before `step`; remembered per step, as branches share them."""
        memo = self._latest_random_map_memo
        unresolved: list[_Step] = []
        found: _Step | None = None
        while step is not None:
            if step in memo:
                found = memo[step]
                break
            function = self._mapped_function(step)
            if function is not None and self._uses_random_ops(function):
                found = memo[step] = step
                break
            unresolved.append(step)
            step = step.previous
        for earlier_step in unresolved:
            memo[earlier_step] = found
        return found

    def _check_map_before_batch(self, method: str, earlier: _Step | None) -> None:
        maps_on_elements: list[_Step] = []
        for step in earlier.walk_back() if earlier is not None else ():
            if step.method in _BATCH_METHODS or step.method in _OTHER_BATCHING_METHODS:
                return  # These maps already see whole batches.
            if step.method == "map":
                maps_on_elements.append(step)
            elif step.method not in _ORDER_AND_BUFFER_METHODS:
                break
        for step in maps_on_elements:
            function = self._mapped_function(step)
            advice = self._batching_advice(function) if function is not None else None
            if advice is None:
                # Maps before this one cannot move past it to the batch, so batching first is no simple fix.
                return
            if advice == "restructure":
                continue
            label = self._function_label(step.call)
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
            self._report("map-before-batch", _call_line(step.call), message)

    def _check_final_prefetch(self) -> None:
        returned_pipelines: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.Return, _Step]] = []
        for function in self._all_nodes:
            if not (
                isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
                and self._scope_of[function] is self._tree
                and not self._is_passed_as_value(function)
            ):
                continue
            for statement in self._returns_of(function):
                returned = statement.value
                # `return train, validation` hands back two pipelines; each should end with prefetch.
                elements = returned.elts if isinstance(returned, ast.Tuple | ast.List) else [returned]
                for element in elements:
                    last = self._pipeline_ending_at(element) if element is not None else None
                    if last is not None:
                        returned_pipelines.append((function, statement, last))
        # Only now, with every returned pipeline traced, is it known which helpers others extend.
        for function, statement, last in returned_pipelines:
            if function in self._extended_helpers or last.method == "prefetch":
                continue
            methods = {step.method for step in last.walk_back()}
            if methods.isdisjoint(_DATASET_METHODS):
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
            self._report("no-final-prefetch", statement.lineno, message)

    def _is_passed_as_value(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """A function handed to interleave, flat_map and the like builds one small dataset per element."""
        return any(node not in self._callees for node in self._name_loads.get(function.name, ()))

    # ----- mapped functions and labels ------------------------------------------------------------------------

    def _mapped_function(self, step: _Step) -> _FunctionNode | None:
        if step.method != "map":
            return None
        if step.call not in self._mapped_function_memo:
            argument = _mapped_argument(step.call)
            function = self._resolve_callable(argument) if argument is not None else None
            self._mapped_function_memo[step.call] = function
        return self._mapped_function_memo[step.call]

    def _function_label(self, call: ast.Call) -> str:
        argument = _mapped_argument(call)
        if argument is None:
            return "..."
        if isinstance(argument, ast.Lambda):
            return "lambda ..."
        if isinstance(argument, ast.Call) and self._qualified_name(argument.func) == "functools.partial":
            inner = argument.args[0] if argument.args else None
            return f"partial({_short_source(inner) if inner is not None else '...'}, ...)"
        return _short_source(argument)


def _method_name(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""


def _mapped_argument(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "map_func":
            return keyword.value
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return None


def _unpack_assignment(target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr]]:
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if (
        isinstance(target, ast.Tuple | ast.List)
        and isinstance(value, ast.Tuple | ast.List)
        and len(target.elts) == len(value.elts)
    ):
        return [
            pair
            for inner, part in zip(target.elts, value.elts, strict=True)
            for pair in _unpack_assignment(inner, part)
        ]
    return []


def _is_elementwise_op(name: str) -> bool:
    if name in _ELEMENTWISE_OPS:
        return True
    return name.startswith("tf.math.") and not name.startswith(_NON_ELEMENTWISE_MATH_PREFIXES)


def _is_same_or_submodule(module: str, forbidden: str) -> bool:
    return bool(forbidden) and (module == forbidden or module.startswith(forbidden + "."))


def _canonical(dotted: str) -> str:
    """Spell TensorFlow as `tf`, whatever alias the learner used, so rules match one name."""
    if dotted == "tensorflow" or dotted.startswith("tensorflow."):
        dotted = "tf" + dotted.removeprefix("tensorflow")
    if dotted.startswith("tf.compat.v2."):
        dotted = "tf." + dotted.removeprefix("tf.compat.v2.")
    return dotted


def _call_line(call: ast.Call) -> int:
    """The line of the called name, which in a fluent chain split over lines is where `.map(` appears."""
    return call.func.end_lineno or call.lineno


def _start_position(node: ast.AST) -> _Position:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _end_position(node: ast.AST) -> _Position:
    return (getattr(node, "end_lineno", None) or 0, getattr(node, "end_col_offset", None) or 0)


def _short_source(expression: ast.expr) -> str:
    try:
        text = " ".join(ast.unparse(expression).split())
    except RecursionError:
        return "..."
    return text if len(text) <= _MAX_LABEL_LENGTH else text[: _MAX_LABEL_LENGTH - 3] + "..."
