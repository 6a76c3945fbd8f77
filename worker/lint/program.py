"""The learner's module as the rules read it: scopes and names resolved, pipelines followed back through fluent
chains, reassigned names and helper functions, and mapped functions resolved to the code they trace.

Whatever cannot be resolved resolves to None: the rules then say nothing rather than guess."""

from __future__ import annotations

import ast
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from worker.lint.vocabulary import (
    ALWAYS_FORBIDDEN_MODULES,
    DATASET_METHODS,
    ELEMENT_CHANGING_METHODS,
    ELEMENTWISE_OPS,
    FORK_FUNCTIONS,
    NON_ELEMENTWISE_MATH_PREFIXES,
    NOT_VECTORIZABLE_NODES,
    OTHER_BATCHING_METHODS,
    PARSE_SINGLE_EXAMPLE,
    PYTHON_FUNCTION_OPS,
    RANDOM_OP_PREFIXES,
)

# Real pipelines have a handful of steps; the caps keep hostile inputs from costing quadratic time.
_MAX_STEPS_WALKED_BACK = 256
_MAX_TRACE_HOPS = 100_000
_MAX_RESOLVE_DEPTH = 16
_MAX_LABEL_LENGTH = 40

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
ScopeNode = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
_SCOPE_TYPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_SHARED_LEAF_TYPES = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
Position = tuple[int, int]
# "restructure": moves values around without computing, so it may go either side of the batch.
BatchingAdvice = Literal["parse", "elementwise", "restructure"]


@dataclass(frozen=True, eq=False)
class Step:
    """One dataset method call in a pipeline, linked to the step before it (shared between branches).

    Compared and hashed by identity: a field-wise hash would walk the whole pipeline every time.
    """

    call: ast.Call
    method: str
    previous: Step | None

    def walk_back(self) -> Iterator[Step]:
        step: Step | None = self
        for _ in range(_MAX_STEPS_WALKED_BACK):
            if step is None:
                return
            yield step
            step = step.previous


class PipelineProgram:
    """A learner's module, indexed once: its scopes, names, pipelines and mapped functions, for the rules to ask."""

    def __init__(self, tree: ast.Module, source_is_files: bool, forbidden_imports: Sequence[str]) -> None:
        self.tree = tree
        self.source_is_files = source_is_files
        requested = [str(module).strip() for module in forbidden_imports]
        self.forbidden_modules = tuple(dict.fromkeys([*ALWAYS_FORBIDDEN_MODULES, *FORK_FUNCTIONS, *requested]))

        self.scope_of: dict[ast.AST, ScopeNode] = {}
        self.all_nodes: list[ast.AST] = []
        self.name_loads: dict[str, list[ast.Name]] = {}
        self.callees: set[ast.expr] = set()
        self.returns: dict[ScopeNode, list[ast.Return]] = {}
        self.index_scopes()
        self.import_aliases = self.collect_import_aliases()
        self.definitions = self.collect_definitions()
        self.assignments = self.collect_assignments()
        self.parameters = self.collect_parameters()

        self.chain_memo: dict[ast.expr, Step | None] = {}
        self.reachable_memo: dict[FunctionNode, list[FunctionNode]] = {}
        self.random_memo: dict[FunctionNode, bool] = {}
        self.batching_memo: dict[FunctionNode, BatchingAdvice | None] = {}
        self.mapped_function_memo: dict[ast.Call, FunctionNode | None] = {}
        self.latest_random_map_memo: dict[Step, Step | None] = {}
        # Functions whose returned dataset some pipeline continues from; their own return needs no prefetch.
        self.extended_helpers: set[FunctionNode] = set()

    # ----- what the rules walk --------------------------------------------------------------------------

    def calls(self) -> Iterator[ast.Call]:
        """Every call in the module, in source order."""
        return (node for node in self.all_nodes if isinstance(node, ast.Call))

    def dataset_steps(self) -> Iterator[tuple[ast.Call, ast.expr, str]]:
        """Every dataset method call, in source order: (the call, what it is called on, the method's name)."""
        for call in self.calls():
            if self.is_dataset_method_call(call) and isinstance(call.func, ast.Attribute):
                yield call, call.func.value, call.func.attr

    # ----- indexing -------------------------------------------------------------------------------------

    def index_scopes(self) -> None:
        pending: list[tuple[ast.AST, ScopeNode]] = [(self.tree, self.tree)]
        while pending:
            node, scope = pending.pop()
            self.all_nodes.append(node)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.name_loads.setdefault(node.id, []).append(node)
            elif isinstance(node, ast.Call):
                self.callees.add(node.func)
            elif isinstance(node, ast.Return):
                self.returns.setdefault(scope, []).append(node)
            inner_scope = node if isinstance(node, _SCOPE_TYPES) else scope
            for child in ast.iter_child_nodes(node):
                # Contexts and operators are shared singletons that carry nothing to analyse.
                if not isinstance(child, _SHARED_LEAF_TYPES):
                    self.scope_of[child] = inner_scope
                    pending.append((child, inner_scope))
        self.all_nodes.sort(key=start_position)

    def collect_import_aliases(self) -> dict[str, str]:
        # `tf` means TensorFlow even where the learner forgot the import line.
        aliases: dict[str, str] = {"tf": "tf"}
        for node in self.all_nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        aliases[alias.asname] = canonical(alias.name)
                    else:
                        root = alias.name.partition(".")[0]
                        aliases[root] = canonical(root)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        aliases[alias.asname or alias.name] = canonical(f"{node.module}.{alias.name}")
        return aliases

    def collect_definitions(self) -> dict[ScopeNode, dict[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
        definitions: dict[ScopeNode, dict[str, ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        for node in self.all_nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                definitions.setdefault(self.scope_of[node], {})[node.name] = node
        return definitions

    def collect_assignments(self) -> dict[ScopeNode, dict[str, tuple[list[Position], list[ast.expr]]]]:
        """For each scope and name, the values assigned to it, in the order the assignments finish."""
        found: list[tuple[Position, ScopeNode, str, ast.expr]] = []
        for node in self.all_nodes:
            pairs: list[tuple[ast.expr, ast.expr]] = []
            if isinstance(node, ast.Assign):
                pairs = [(target, node.value) for target in node.targets]
            elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None:
                pairs = [(node.target, node.value)]
            for target, value in pairs:
                for name, assigned in unpack_assignment(target, value):
                    found.append((end_position(node), self.scope_of[node], name, assigned))
        found.sort(key=lambda entry: entry[0])
        assignments: dict[ScopeNode, dict[str, tuple[list[Position], list[ast.expr]]]] = {}
        for position, scope, name, value in found:
            positions, values = assignments.setdefault(scope, {}).setdefault(name, ([], []))
            positions.append(position)
            values.append(value)
        return assignments

    def collect_parameters(self) -> dict[ScopeNode, set[str]]:
        parameters: dict[ScopeNode, set[str]] = {}
        for node in self.all_nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                arguments = node.args
                every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
                every += [extra for extra in (arguments.vararg, arguments.kwarg) if extra is not None]
                parameters[node] = {argument.arg for argument in every}
        return parameters

    # ----- names ----------------------------------------------------------------------------------------

    def qualified_name(self, expression: ast.expr) -> str | None:
        """`tf.image.resize` for `t.image.resize` after `import tensorflow as t`; None for non-dotted names."""
        attributes: list[str] = []
        while isinstance(expression, ast.Attribute):
            attributes.append(expression.attr)
            expression = expression.value
        if not isinstance(expression, ast.Name):
            return None
        root = self.import_aliases.get(expression.id, expression.id)
        return canonical(".".join([root, *reversed(attributes)]))

    def is_module_path(self, expression: ast.expr) -> bool:
        while isinstance(expression, ast.Attribute):
            expression = expression.value
        return isinstance(expression, ast.Name) and expression.id in self.import_aliases

    def is_dataset_method_call(self, node: ast.AST, also: frozenset[str] = frozenset()) -> bool:
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and (node.func.attr in DATASET_METHODS or node.func.attr in also)
            # tf.random.shuffle and numpy's random.shuffle are functions in a module, not dataset steps.
            and not self.is_module_path(node.func.value)
        )

    def enclosing_scopes(self, node: ast.AST) -> Iterator[ScopeNode]:
        scope = self.scope_of.get(node)
        while scope is not None:
            # A class body's names are not visible from the functions inside it.
            if not isinstance(scope, ast.ClassDef):
                yield scope
            scope = self.scope_of.get(scope)

    def resolve_definition(self, name: ast.Name) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        for scope in self.enclosing_scopes(name):
            definition = self.definitions.get(scope, {}).get(name.id)
            if definition is not None:
                return definition
            if name.id in self.parameters.get(scope, ()):
                return None
        return None

    def assigned_value(self, name: ast.Name) -> ast.expr | None:
        """The value `name` was last given before this use, in its own scope or (if free) an enclosing one."""
        for depth, scope in enumerate(self.enclosing_scopes(name)):
            positions, values = self.assignments.get(scope, {}).get(name.id, ([], []))
            # A free variable is read when the function runs, after the whole enclosing scope has run.
            assigned_before = len(values) if depth > 0 else bisect_right(positions, start_position(name))
            if assigned_before:
                return values[assigned_before - 1]
            if values or name.id in self.parameters.get(scope, ()):
                # Bound here only later, or by the caller: nothing we can follow.
                return None
        return None

    def resolve_callable(self, expression: ast.expr) -> FunctionNode | None:
        """The lambda or def that `expression` (a name, lambda or functools.partial) stands for."""
        for _ in range(_MAX_RESOLVE_DEPTH):
            if isinstance(expression, ast.Lambda):
                return expression
            if isinstance(expression, ast.Name):
                definition = self.resolve_definition(expression)
                if definition is not None:
                    return definition
                assigned = self.assigned_value(expression)
                if assigned is None:
                    return None
                expression = assigned
            elif (
                isinstance(expression, ast.Call)
                and self.qualified_name(expression.func) == "functools.partial"
                and expression.args
            ):
                expression = expression.args[0]
            else:
                return None
        return None

    # ----- pipelines ------------------------------------------------------------------------------------

    def pipeline_ending_at(self, expression: ast.expr) -> Step | None:
        """The dataset steps that produce `expression`, found by walking back through receivers and names."""
        visited: list[ast.expr] = []
        helpers_entered: set[FunctionNode] = set()
        base: Step | None = None
        current: ast.expr | None = expression
        for _ in range(_MAX_TRACE_HOPS):
            if current is None:
                break
            if current in self.chain_memo:
                base = self.chain_memo[current]
                break
            visited.append(current)
            current = self.feeding_expression(current, helpers_entered)
        step = base
        for node in reversed(visited):
            if isinstance(node, ast.Call) and self.is_dataset_method_call(
                node, also=OTHER_BATCHING_METHODS | ELEMENT_CHANGING_METHODS
            ):
                step = Step(node, method_name(node), step)
            self.chain_memo[node] = step
        return self.chain_memo.get(expression)

    def feeding_expression(self, expression: ast.expr, helpers_entered: set[FunctionNode]) -> ast.expr | None:
        """The expression whose dataset `expression` is built from, or None where the pipeline starts."""
        if isinstance(expression, ast.Name):
            return self.assigned_value(expression)
        if not isinstance(expression, ast.Call):
            return None
        if isinstance(expression.func, ast.Attribute):
            # A constructor such as tf.data.TFRecordDataset(...) starts the pipeline.
            return None if self.is_module_path(expression.func.value) else expression.func.value
        if isinstance(expression.func, ast.Name):
            # A pipeline built by a helper function of the learner's continues into that helper.
            helper = self.resolve_callable(expression.func)
            if helper is None or helper in helpers_entered:
                return None
            helpers_entered.add(helper)
            self.extended_helpers.add(helper)
            if isinstance(helper, ast.Lambda):
                return helper.body
            returned = [node.value for node in self.returns_of(helper) if node.value is not None]
            return returned[-1] if returned else None
        return None

    def returns_of(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Return]:
        return self.returns.get(function, [])

    # ----- mapped functions -----------------------------------------------------------------------------

    def own_nodes(self, function: FunctionNode) -> Iterator[ast.AST]:
        """Nodes of the function body that run when it is traced: not nested defs, not py_function's Python."""
        pending: list[ast.AST] = [function.body] if isinstance(function, ast.Lambda) else list(function.body)
        while pending:
            node = pending.pop()
            yield node
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            skipped = self.python_function_argument(node) if isinstance(node, ast.Call) else None
            pending.extend(child for child in ast.iter_child_nodes(node) if child is not skipped)

    def python_function_argument(self, call: ast.Call) -> ast.expr | None:
        """The Python callable handed to tf.py_function: it runs eagerly, so its insides are no map pitfall."""
        if self.qualified_name(call.func) not in PYTHON_FUNCTION_OPS:
            return None
        for keyword in call.keywords:
            if keyword.arg == "func":
                return keyword.value
        return call.args[0] if call.args else None

    def reachable_functions(self, function: FunctionNode) -> list[FunctionNode]:
        """The mapped function and the learner's functions it uses, all traced into the same graph."""
        if function in self.reachable_memo:
            return self.reachable_memo[function]
        reachable = [function]
        index = 0
        while index < len(reachable):
            for node in self.own_nodes(reachable[index]):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    used = self.resolve_callable(node)
                    if used is not None and used not in reachable:
                        reachable.append(used)
            index += 1
        self.reachable_memo[function] = reachable
        return reachable

    def traced_nodes(self, function: FunctionNode) -> Iterator[ast.AST]:
        for reachable in self.reachable_functions(function):
            yield from self.own_nodes(reachable)

    def uses_random_ops(self, function: FunctionNode) -> bool:
        if function not in self.random_memo:
            self.random_memo[function] = any(
                isinstance(node, ast.Call) and self.is_random_call(node) for node in self.traced_nodes(function)
            )
        return self.random_memo[function]

    def is_random_call(self, call: ast.Call) -> bool:
        name = self.qualified_name(call.func)
        if name is not None and name.startswith(RANDOM_OP_PREFIXES):
            return True
        if isinstance(call.func, ast.Name):
            # flip = tf.keras.layers.RandomFlip(...) at module level, then flip(image) in the mapped function.
            layer = self.assigned_value(call.func)
            if layer is not None and not isinstance(layer, ast.Lambda):
                return any(
                    isinstance(node, ast.Call) and (self.qualified_name(node.func) or "").startswith(RANDOM_OP_PREFIXES)
                    for node in ast.walk(layer)
                )
        return False

    def batching_advice(self, function: FunctionNode) -> BatchingAdvice | None:
        """Why the function could run on whole batches instead, or None if it (maybe) cannot."""
        if function not in self.batching_memo:
            self.batching_memo[function] = self.judge_vectorizable(function)
        return self.batching_memo[function]

    def judge_vectorizable(self, function: FunctionNode) -> BatchingAdvice | None:
        reachable = self.reachable_functions(function)
        parses_single_examples = False
        does_elementwise_work = False
        for node in self.traced_nodes(function):
            if isinstance(node, NOT_VECTORIZABLE_NODES):
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
                name = self.qualified_name(node.func)
                if name == PARSE_SINGLE_EXAMPLE:
                    parses_single_examples = True
                elif name is not None and is_elementwise_op(name):
                    does_elementwise_work = does_elementwise_work or name != "dict"
                elif not (isinstance(node.func, ast.Name) and self.resolve_callable(node.func) in reachable):
                    return None
        if parses_single_examples:
            return "parse"
        return "elementwise" if does_elementwise_work else "restructure"

    # ----- shared by the rules ---------------------------------------------------------------------------

    def latest_random_map(self, step: Step | None) -> Step | None:
        """The last map with random ops at or before `step`; remembered per step, as branches share them."""
        memo = self.latest_random_map_memo
        unresolved: list[Step] = []
        found: Step | None = None
        while step is not None:
            if step in memo:
                found = memo[step]
                break
            function = self.mapped_function(step)
            if function is not None and self.uses_random_ops(function):
                found = memo[step] = step
                break
            unresolved.append(step)
            step = step.previous
        for earlier_step in unresolved:
            memo[earlier_step] = found
        return found

    def is_passed_as_value(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """A function handed to interleave, flat_map and the like builds one small dataset per element."""
        return any(node not in self.callees for node in self.name_loads.get(function.name, ()))

    # ----- mapped functions and labels ------------------------------------------------------------------------

    def mapped_function(self, step: Step) -> FunctionNode | None:
        if step.method != "map":
            return None
        if step.call not in self.mapped_function_memo:
            argument = mapped_argument(step.call)
            function = self.resolve_callable(argument) if argument is not None else None
            self.mapped_function_memo[step.call] = function
        return self.mapped_function_memo[step.call]

    def function_label(self, call: ast.Call) -> str:
        argument = mapped_argument(call)
        if argument is None:
            return "..."
        if isinstance(argument, ast.Lambda):
            return "lambda ..."
        if isinstance(argument, ast.Call) and self.qualified_name(argument.func) == "functools.partial":
            inner = argument.args[0] if argument.args else None
            return f"partial({short_source(inner) if inner is not None else '...'}, ...)"
        return short_source(argument)


def method_name(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""


def mapped_argument(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "map_func":
            return keyword.value
    if call.args and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    return None


def unpack_assignment(target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr]]:
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if (
        isinstance(target, ast.Tuple | ast.List)
        and isinstance(value, ast.Tuple | ast.List)
        and len(target.elts) == len(value.elts)
    ):
        return [
            pair for inner, part in zip(target.elts, value.elts, strict=True) for pair in unpack_assignment(inner, part)
        ]
    return []


def is_elementwise_op(name: str) -> bool:
    if name in ELEMENTWISE_OPS:
        return True
    return name.startswith("tf.math.") and not name.startswith(NON_ELEMENTWISE_MATH_PREFIXES)


def is_same_or_submodule(module: str, forbidden: str) -> bool:
    return bool(forbidden) and (module == forbidden or module.startswith(forbidden + "."))


def canonical(dotted: str) -> str:
    """Spell TensorFlow as `tf`, whatever alias the learner used, so rules match one name."""
    if dotted == "tensorflow" or dotted.startswith("tensorflow."):
        dotted = "tf" + dotted.removeprefix("tensorflow")
    if dotted.startswith("tf.compat.v2."):
        dotted = "tf." + dotted.removeprefix("tf.compat.v2.")
    return dotted


def call_line(call: ast.Call) -> int:
    """The line of the called name, which in a fluent chain split over lines is where `.map(` appears."""
    return call.func.end_lineno or call.lineno


def start_position(node: ast.AST) -> Position:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def end_position(node: ast.AST) -> Position:
    return (getattr(node, "end_lineno", None) or 0, getattr(node, "end_col_offset", None) or 0)


def short_source(expression: ast.expr) -> str:
    try:
        text = " ".join(ast.unparse(expression).split())
    except RecursionError:
        return "..."
    return text if len(text) <= _MAX_LABEL_LENGTH else text[: _MAX_LABEL_LENGTH - 3] + "..."
