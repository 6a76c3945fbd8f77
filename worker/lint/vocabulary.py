"""What the linter knows of tf.data, TensorFlow and Python: which calls are dataset steps, which ops are
element-wise, random or Python, and which modules bring in threads."""

from __future__ import annotations

import ast

DATASET_METHODS = frozenset(
    {"map", "batch", "padded_batch", "cache", "prefetch", "interleave", "shuffle", "unbatch", "ignore_errors"}
)
# Ops that turn a serialized record into tensors, and fail on a record that does not fit the schema.
RECORD_PARSING_OPS = frozenset(
    {
        "tf.io.parse_single_example",
        "tf.io.parse_example",
        "tf.io.parse_single_sequence_example",
        "tf.io.parse_sequence_example",
        "tf.io.parse_tensor",
        "tf.io.decode_proto",
    }
)
# Schema features whose default_value stands in for a feature a record lacks.
SCHEMA_FEATURES = frozenset({"tf.io.FixedLenFeature", "tf.io.FixedLenSequenceFeature"})
BATCH_METHODS = frozenset({"batch", "padded_batch"})
# Further steps followed through a pipeline because they bound how far a map can be moved: after these,
# elements are batches or windows; the rest change which elements there are or what they look like.
OTHER_BATCHING_METHODS = frozenset(
    {"ragged_batch", "bucket_by_sequence_length", "rebatch", "window", "group_by_window"}
)
ELEMENT_CHANGING_METHODS = frozenset({"filter", "flat_map", "scan", "enumerate", "zip", "take_while", "unique"})
# Steps a map can be moved past without changing what the pipeline yields.
ORDER_AND_BUFFER_METHODS = frozenset({"shuffle", "cache", "prefetch"})
# Where num_parallel_calls sits among the positional parameters of Dataset.map and Dataset.interleave.
PARALLEL_CALLS_POSITION = {"map": 1, "interleave": 3}

ALWAYS_FORBIDDEN_MODULES = ("threading", "_thread", "multiprocessing", "concurrent.futures", "subprocess")
# Not modules, but matched like them so that `from os import fork` and `os.fork()` are both caught.
FORK_FUNCTIONS = ("os.fork", "os.forkpty")
DYNAMIC_IMPORT_FUNCTIONS = frozenset({"__import__", "importlib.import_module", "importlib.__import__"})

PYTHON_FUNCTION_OPS = frozenset(
    {
        "tf.py_function",
        "tf.numpy_function",
        "tf.py_func",
        "tf.compat.v1.py_func",
        "tf.compat.v1.py_function",
        "tf.compat.v1.numpy_function",
    }
)
RANDOM_OP_PREFIXES = (
    "tf.image.random_",
    "tf.image.stateless_random_",
    "tf.random.",
    "tf.keras.layers.Random",
    "tf.keras.layers.experimental.preprocessing.Random",
    "keras.layers.Random",
)
PARSE_SINGLE_EXAMPLE = "tf.io.parse_single_example"
# Ops that treat every value on its own, so they give the same result on a batch as on each element.
ELEMENTWISE_OPS = frozenset(
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
NON_ELEMENTWISE_MATH_PREFIXES = (
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
NOT_VECTORIZABLE_NODES = (
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
