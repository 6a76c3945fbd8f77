"""The pipeline linter points at each tf.data pitfall on the right line, and stays quiet on idiomatic code.

Every finding is shown to a learner, so each rule has cases where it must fire (with the line) and cases of
correct code where it must not; the deck's expert references are the final word on "correct".
"""

from __future__ import annotations

import random
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from worker.lint import RULES, Finding, lint_pipeline_code

DECK_PATH = Path(__file__).resolve().parents[2] / "decks" / "tensorflow-ai-phd.yaml"

NAIVE_IMAGE_PIPELINE = """\
import tensorflow as tf

FEATURES = {
    "image": tf.io.FixedLenFeature([], tf.string),
    "label": tf.io.FixedLenFeature([], tf.int64),
}


def parse_record(record):
    parsed = tf.io.parse_single_example(record, FEATURES)
    image = tf.io.decode_jpeg(parsed["image"], channels=3)
    image = tf.ensure_shape(image, [224, 224, 3])
    image = tf.cast(image, tf.float32) / 255.0
    label = tf.cast(parsed["label"], tf.int32)
    return image, label


def build_pipeline(files):
    records = tf.data.TFRecordDataset(files)
    records = records.shuffle(1024)
    examples = records.map(parse_record)
    return examples.batch(32, drop_remainder=True)
"""

EXPERT_IMAGE_PIPELINE = """\
import tensorflow as tf

AUTOTUNE = tf.data.AUTOTUNE
FEATURES = {
    "image": tf.io.FixedLenFeature([], tf.string),
    "label": tf.io.FixedLenFeature([], tf.int64),
}


def parse_record(record):
    parsed = tf.io.parse_single_example(record, FEATURES)
    image = tf.io.decode_jpeg(parsed["image"], channels=3)
    image = tf.ensure_shape(image, [224, 224, 3])
    image = tf.cast(image, tf.float32) / 255.0
    label = tf.cast(parsed["label"], tf.int32)
    return image, label


def build_pipeline(files):
    shard_names = tf.data.Dataset.from_tensor_slices(files).shuffle(len(files))
    records = shard_names.interleave(
        tf.data.TFRecordDataset,
        cycle_length=AUTOTUNE,
        num_parallel_calls=AUTOTUNE,
        deterministic=False,
    )
    records = records.shuffle(1024)
    examples = records.map(parse_record, num_parallel_calls=AUTOTUNE, deterministic=False)
    batches = examples.batch(32, drop_remainder=True)
    return batches.prefetch(AUTOTUNE)
"""


def lint(code: str, *, source_is_files: bool = True, forbidden_imports: Sequence[str] = ()) -> list[Finding]:
    return lint_pipeline_code(
        textwrap.dedent(code), source_is_files=source_is_files, forbidden_imports=forbidden_imports
    )


def lines_of(rule: str, code: str, *, source_is_files: bool = True, forbidden_imports: Sequence[str] = ()) -> list[int]:
    findings = lint(code, source_is_files=source_is_files, forbidden_imports=forbidden_imports)
    return [finding.line for finding in findings if finding.rule == rule]


def messages_of(rule: str, code: str) -> list[str]:
    return [finding.message for finding in lint(code) if finding.rule == rule]


# ----- the public shape ----------------------------------------------------------------------------------


def test_rules_are_the_nine_documented_ids():
    assert set(RULES) == {
        "generator-for-files",
        "python-in-map",
        "no-final-prefetch",
        "no-parallel-calls",
        "hand-written-threading",
        "cache-after-augmentation",
        "map-before-batch",
        "schema-default",
        "ignore-errors-before-parse",
    }
    assert all(title.strip() for title in RULES.values())


def test_finding_as_dict_has_rule_line_and_message():
    finding = Finding(rule="no-final-prefetch", line=3, message="Add prefetch.")
    assert finding.as_dict() == {"rule": "no-final-prefetch", "line": 3, "message": "Add prefetch."}


def test_findings_are_sorted_by_line_then_rule_and_unique_per_rule_and_line():
    findings = lint(
        """\
        import tensorflow as tf


        def build_pipeline(files):
            scaled = tf.data.TFRecordDataset(files).map(lambda x: x * 2.0).map(lambda x: x + 1.0)
            return scaled.batch(8)
        """
    )
    assert [(finding.line, finding.rule) for finding in findings] == [
        (5, "map-before-batch"),
        (5, "no-parallel-calls"),
        (6, "no-final-prefetch"),
    ]


def test_every_finding_names_a_known_rule_and_keeps_the_line_out_of_the_message():
    for finding in lint(NAIVE_IMAGE_PIPELINE):
        assert finding.rule in RULES
        assert not finding.message.lower().startswith("line")
        assert finding.message.endswith(".")


# ----- the two reference solutions -----------------------------------------------------------------------


def test_naive_reference_misses_prefetch_and_parallel_map_but_its_jpeg_map_is_not_vectorizable():
    findings = lint(NAIVE_IMAGE_PIPELINE)
    assert [(finding.rule, finding.line) for finding in findings] == [
        ("no-parallel-calls", 21),
        ("no-final-prefetch", 22),
    ]
    assert "map(parse_record)" in findings[0].message
    assert "num_parallel_calls=tf.data.AUTOTUNE" in findings[0].message
    assert ".prefetch(tf.data.AUTOTUNE)" in findings[1].message


def test_expert_reference_has_no_findings():
    assert lint(EXPERT_IMAGE_PIPELINE) == []


# ----- generator-for-files -------------------------------------------------------------------------------

GENERATOR_PIPELINE = """\
import tensorflow as tf


def build_pipeline(files):
    def read_files():
        for path in files:
            yield open(path, "rb").read()

    records = tf.data.Dataset.from_generator(
        read_files, output_signature=tf.TensorSpec(shape=(), dtype=tf.string)
    )
    return records.batch(32).prefetch(tf.data.AUTOTUNE)
"""


def test_from_generator_over_files_is_reported_on_its_line():
    assert lines_of("generator-for-files", GENERATOR_PIPELINE, source_is_files=True) == [9]
    assert "TFRecordDataset" in messages_of("generator-for-files", GENERATOR_PIPELINE)[0]


def test_from_generator_is_fine_when_the_source_is_not_files():
    assert lines_of("generator-for-files", GENERATOR_PIPELINE, source_is_files=False) == []


def test_builtin_file_reader_is_not_reported():
    assert lines_of("generator-for-files", EXPERT_IMAGE_PIPELINE, source_is_files=True) == []


# ----- python-in-map -------------------------------------------------------------------------------------


def test_py_function_in_a_mapped_def_is_reported_on_the_py_function_line():
    code = """\
    import tensorflow as tf


    def slow_python(x):
        return x * 2


    def transform(x):
        y = tf.py_function(slow_python, [x], tf.float32)
        return y


    def build_pipeline(ds):
        return ds.map(transform, num_parallel_calls=tf.data.AUTOTUNE).prefetch(1)
    """
    assert lines_of("python-in-map", code) == [9]
    assert "tf.py_function" in messages_of("python-in-map", code)[0]


def test_numpy_call_in_a_lambda_under_another_tensorflow_alias_is_reported():
    code = """\
    import tensorflow as t

    dataset = t.data.Dataset.range(10)
    dataset = dataset.map(
        lambda x: x.numpy() + 1,
        num_parallel_calls=t.data.AUTOTUNE,
    )
    """
    assert lines_of("python-in-map", code) == [5]


def test_numpy_function_through_functools_partial_and_a_called_helper_is_reported():
    code = """\
    import functools

    import tensorflow as tf


    def helper(x):
        return tf.numpy_function(lambda v: v, [x], tf.float32)


    def scale(x, factor):
        return helper(x) * factor


    def build_pipeline(ds):
        ds = ds.map(functools.partial(scale, factor=2.0), num_parallel_calls=tf.data.AUTOTUNE)
        return ds.prefetch(tf.data.AUTOTUNE)
    """
    assert lines_of("python-in-map", code) == [7]


def test_print_in_a_nested_mapped_def_and_py_function_passed_directly_are_reported():
    code = """\
    import tensorflow as tf


    def build_pipeline(ds, python_fn):
        def show(x):
            print(x)
            return x

        ds = ds.map(show, num_parallel_calls=tf.data.AUTOTUNE)
        ds = ds.map(tf.py_function, num_parallel_calls=tf.data.AUTOTUNE)
        return ds.prefetch(tf.data.AUTOTUNE)
    """
    assert lines_of("python-in-map", code) == [6, 10]
    assert "tf.print" in messages_of("python-in-map", code)[0]


def test_tensorflow_ops_and_python_outside_map_are_not_python_in_map():
    code = """\
    import tensorflow as tf


    def slow_python(x):
        print("converting", x.numpy())
        return x.numpy() * 2


    def transform(x):
        tf.print("element", x)
        return tf.math.log1p(tf.cast(x, tf.float32))


    def inspect(ds):
        for x in ds.take(1):
            print(x.numpy())


    def build_pipeline(ds):
        ds = ds.map(transform, num_parallel_calls=tf.data.AUTOTUNE)
        return ds.prefetch(tf.data.AUTOTUNE)
    """
    assert lines_of("python-in-map", code) == []


def test_only_the_py_function_line_is_reported_not_the_python_it_runs():
    code = """\
    import tensorflow as tf


    def build_pipeline(ds):
        def in_python(x):
            return x.numpy() * 2

        def transform(x):
            return tf.py_function(in_python, [x], tf.int64)

        return ds.map(transform, num_parallel_calls=tf.data.AUTOTUNE).prefetch(1)
    """
    assert lines_of("python-in-map", code) == [9]


# ----- no-final-prefetch ---------------------------------------------------------------------------------


def test_fluent_chain_without_prefetch_is_reported_on_the_return_line():
    code = """\
    import tensorflow as tf


    def build_pipeline(files):
        AUTOTUNE = tf.data.AUTOTUNE
        return tf.data.TFRecordDataset(files).map(len, num_parallel_calls=AUTOTUNE).batch(32)
    """
    assert lines_of("no-final-prefetch", code) == [6]
    assert "build_pipeline" in messages_of("no-final-prefetch", code)[0]


def test_reassigned_pipeline_without_prefetch_is_reported_on_the_return_line():
    code = """\
    import tensorflow as tf


    def build_pipeline(files):
        ds = tf.data.TFRecordDataset(files)
        ds = ds.shuffle(1000)
        ds = ds.batch(32)
        return ds
    """
    assert lines_of("no-final-prefetch", code) == [8]


def test_step_after_prefetch_is_reported_with_the_step_named():
    code = """\
    import tensorflow as tf


    def build_pipeline(files):
        ds = tf.data.TFRecordDataset(files).prefetch(tf.data.AUTOTUNE)
        return ds.batch(32)
    """
    assert lines_of("no-final-prefetch", code) == [6]
    assert "batch() after prefetch()" in messages_of("no-final-prefetch", code)[0]


def test_pipeline_built_by_a_helper_is_reported_where_the_entry_point_returns_it():
    code = """\
    import tensorflow as tf


    def make_batches(files):
        return tf.data.TFRecordDataset(files).batch(32)


    def build_pipeline(files):
        batches = make_batches(files)
        return batches
    """
    assert lines_of("no-final-prefetch", code) == [10]


def test_pipelines_ending_with_prefetch_are_not_reported():
    code = """\
    import tensorflow as tf


    def fluent(files):
        return tf.data.TFRecordDataset(files).batch(32).prefetch(tf.data.AUTOTUNE)


    def reassigned(files):
        ds = tf.data.TFRecordDataset(files)
        ds = ds.batch(32)
        ds = ds.prefetch(tf.data.AUTOTUNE)
        return ds


    def repeated(files):
        return tf.data.TFRecordDataset(files).batch(32).prefetch(2).repeat()
    """
    assert lines_of("no-final-prefetch", code) == []


def test_helpers_whose_dataset_is_used_elsewhere_and_non_datasets_are_not_reported():
    code = """\
    import tensorflow as tf


    def parse(record):
        return tf.io.parse_tensor(record, tf.float32)


    def read_shard(path):
        return tf.data.TFRecordDataset(path).map(parse, num_parallel_calls=tf.data.AUTOTUNE)


    def batched(files):
        return tf.data.Dataset.from_tensor_slices(files).interleave(
            read_shard, num_parallel_calls=tf.data.AUTOTUNE
        ).batch(8)


    def build_pipeline(files):
        return batched(files).prefetch(tf.data.AUTOTUNE)
    """
    assert lines_of("no-final-prefetch", code) == []


def test_entry_point_used_by_a_training_function_is_still_checked():
    code = """\
    import tensorflow as tf


    def build_pipeline(files):
        return tf.data.TFRecordDataset(files).batch(32)


    def train(model, files):
        model.fit(build_pipeline(files), epochs=3)
        return model
    """
    assert lines_of("no-final-prefetch", code) == [5]


def test_options_after_the_final_prefetch_are_fine():
    code = """\
    import tensorflow as tf


    def build_pipeline(files):
        options = tf.data.Options()
        options.deterministic = False
        return tf.data.TFRecordDataset(files).batch(32).prefetch(tf.data.AUTOTUNE).with_options(options)
    """
    assert lines_of("no-final-prefetch", code) == []


# ----- no-parallel-calls ---------------------------------------------------------------------------------


def test_sequential_map_and_interleave_are_reported_on_their_own_lines():
    code = """\
    import tensorflow as tf


    def build_pipeline(files, parse):
        ds = (
            tf.data.Dataset.from_tensor_slices(files)
            .interleave(tf.data.TFRecordDataset, cycle_length=4)
            .map(parse)
            .map(len, num_parallel_calls=None)
        )
        return ds.prefetch(tf.data.AUTOTUNE)
    """
    assert lines_of("no-parallel-calls", code) == [7, 8, 9]
    assert "interleave(tf.data.TFRecordDataset)" in messages_of("no-parallel-calls", code)[0]


def test_parallel_calls_by_keyword_position_or_options_are_not_reported():
    code = """\
    import tensorflow as tf

    AUTOTUNE = tf.data.AUTOTUNE
    OPTIONS = {"num_parallel_calls": AUTOTUNE}


    def build_pipeline(files, parse):
        ds = tf.data.Dataset.from_tensor_slices(files)
        ds = ds.interleave(tf.data.TFRecordDataset, 4, 1, AUTOTUNE)
        ds = ds.map(parse, AUTOTUNE)
        ds = ds.map(parse, num_parallel_calls=8)
        ds = ds.map(parse, **OPTIONS)
        sizes = list(map(len, files))
        return ds.prefetch(AUTOTUNE), sizes
    """
    assert lines_of("no-parallel-calls", code) == []


# ----- hand-written-threading ----------------------------------------------------------------------------


def test_thread_and_process_imports_are_reported_on_their_lines():
    code = """\
    import threading
    from concurrent.futures import ThreadPoolExecutor
    import concurrent.futures.thread
    from concurrent import futures
    import multiprocessing as mp
    from threading import Thread
    import _thread
    """
    assert lines_of("hand-written-threading", code) == [1, 2, 3, 4, 5, 6, 7]
    assert "import threading" in messages_of("hand-written-threading", code)[0]


def test_dynamic_imports_fork_and_caller_forbidden_modules_are_reported():
    code = """\
    import importlib
    import os
    import socket

    threads = __import__("threading")
    pool = importlib.import_module("multiprocessing.pool")
    child = os.fork()
    """
    assert lines_of("hand-written-threading", code, forbidden_imports=["socket"]) == [3, 5, 6, 7]


def test_unrelated_imports_are_not_threading():
    code = """\
    import functools
    import os
    import threadpoolctl
    import concurrent

    import numpy as np
    import tensorflow as tf

    name = __import__("json")
    """
    assert lines_of("hand-written-threading", code, forbidden_imports=["threading", "socket"]) == []


def test_threading_message_names_only_the_threading_module():
    messages = messages_of("hand-written-threading", "import queue, threading\n")
    assert len(messages) == 1
    assert messages[0].startswith("import threading ")


# ----- cache-after-augmentation --------------------------------------------------------------------------


def test_cache_after_a_random_map_is_reported_on_the_cache_line():
    code = """\
    import tensorflow as tf

    AUTOTUNE = tf.data.AUTOTUNE


    def augment(image, label):
        return tf.image.random_flip_left_right(image), label


    def build_pipeline(ds):
        ds = ds.map(augment, num_parallel_calls=AUTOTUNE)
        ds = ds.shuffle(256)
        ds = ds.cache()
        return ds.batch(32).prefetch(AUTOTUNE)
    """
    assert lines_of("cache-after-augmentation", code) == [13]
    assert "map(augment)" in messages_of("cache-after-augmentation", code)[0]


def test_cache_after_random_ops_in_a_fluent_chain_alias_or_keras_layer_is_reported():
    code = """\
    import tensorflow as tensor_flow
    from tensorflow.keras import layers

    flip = layers.RandomFlip("horizontal")
    AUTOTUNE = tensor_flow.data.AUTOTUNE


    def noisy(ds):
        return ds.map(
            lambda x: x + tensor_flow.random.normal([3]), num_parallel_calls=AUTOTUNE
        ).cache().prefetch(AUTOTUNE)


    def flipped(ds):
        ds = ds.map(lambda image: flip(image), num_parallel_calls=AUTOTUNE).cache()
        return ds.prefetch(AUTOTUNE)
    """
    assert lines_of("cache-after-augmentation", code) == [11, 15]


def test_cache_before_augmentation_or_after_deterministic_work_is_not_reported():
    code = """\
    import tensorflow as tf

    AUTOTUNE = tf.data.AUTOTUNE


    def decode(record):
        image = tf.io.decode_jpeg(record, channels=3)
        return tf.image.resize(image, [64, 64])


    def augment(image):
        return tf.image.random_flip_left_right(image)


    def build_pipeline(files):
        ds = tf.data.TFRecordDataset(files).map(decode, num_parallel_calls=AUTOTUNE).cache()
        ds = ds.shuffle(256).map(augment, num_parallel_calls=AUTOTUNE)
        return ds.batch(32).prefetch(AUTOTUNE)
    """
    assert lines_of("cache-after-augmentation", code) == []


def test_cache_after_a_keras_augmentation_model_is_reported():
    code = """\
    import tensorflow as tf

    augmenter = tf.keras.Sequential([tf.keras.layers.RandomFlip("horizontal")])


    def build_pipeline(ds):
        ds = ds.map(lambda x: augmenter(x, training=True), num_parallel_calls=tf.data.AUTOTUNE)
        return ds.cache().batch(8).prefetch(tf.data.AUTOTUNE)
    """
    assert lines_of("cache-after-augmentation", code) == [8]


# ----- map-before-batch ----------------------------------------------------------------------------------


def test_parse_single_example_before_batch_is_reported_on_the_map_line():
    code = """\
    import tensorflow as tf

    FEATURES = {"x": tf.io.FixedLenFeature([16], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}


    def parse_record(record):
        parsed = tf.io.parse_single_example(record, FEATURES)
        return parsed["x"], tf.cast(parsed["y"], tf.int32)


    def build_pipeline(files):
        ds = tf.data.TFRecordDataset(files)
        ds = ds.map(parse_record, num_parallel_calls=tf.data.AUTOTUNE)
        ds = ds.shuffle(1024)
        ds = ds.batch(256)
        return ds.prefetch(tf.data.AUTOTUNE)
    """
    assert lines_of("map-before-batch", code) == [13]
    message = messages_of("map-before-batch", code)[0]
    assert "map(parse_record)" in message
    assert "tf.io.parse_example" in message


def test_element_wise_maps_before_batch_or_padded_batch_are_reported():
    code = """\
    import tensorflow as tf

    AUTOTUNE = tf.data.AUTOTUNE


    def normalize(x, y):
        return clip(tf.cast(x, tf.float32) / 255.0), tf.one_hot(y, 10)


    def clip(x):
        return tf.clip_by_value(tf.math.log1p(x), 0.0, 1.0)


    def build_pipeline(ds):
        ds = ds.map(normalize, num_parallel_calls=AUTOTUNE)
        ds = ds.map(lambda x, y: {"x": -x, "y": y}, num_parallel_calls=AUTOTUNE)
        return ds.padded_batch(32).prefetch(AUTOTUNE)
    """
    assert lines_of("map-before-batch", code) == [15, 16]
    assert "before padded_batch()" in messages_of("map-before-batch", code)[0]


def test_maps_that_cannot_or_need_not_be_vectorized_are_not_reported():
    code = """\
    import tensorflow as tf

    AUTOTUNE = tf.data.AUTOTUNE
    FEATURES = {"x": tf.io.FixedLenFeature([16], tf.float32)}


    def decode(path, label):
        image = tf.io.decode_jpeg(tf.io.read_file(path), channels=3)
        return tf.image.resize(image, [64, 64]), label


    def parse_batch(serialized):
        return tf.io.parse_example(serialized, FEATURES)["x"] / 2.0


    def build_pipeline(ds, records):
        ds = ds.map(decode, num_parallel_calls=AUTOTUNE)
        ds = ds.map(lambda x, y: (tf.reshape(x, [-1]), y), num_parallel_calls=AUTOTUNE)
        ds = ds.map(lambda x, y: (x[0] * 2.0, y), num_parallel_calls=AUTOTUNE)
        ds = ds.map(lambda x, y: (x, y), num_parallel_calls=AUTOTUNE)
        ds = ds.batch(32)
        ds = ds.map(lambda x, y: (x * 2.0, y), num_parallel_calls=AUTOTUNE).unbatch().batch(8)
        parsed = records.batch(256).map(parse_batch, num_parallel_calls=AUTOTUNE)
        return ds.prefetch(AUTOTUNE), parsed.prefetch(AUTOTUNE)
    """
    assert lines_of("map-before-batch", code) == []


def test_parse_map_is_reported_through_a_later_restructuring_map_and_shuffle():
    code = """\
    import tensorflow as tf

    FEATURES = {"x": tf.io.FixedLenFeature([16], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}


    def build_pipeline(records):
        ds = records.map(lambda r: tf.io.parse_single_example(r, FEATURES), num_parallel_calls=-1)
        ds = ds.map(lambda parsed: (parsed["x"], parsed["y"]), num_parallel_calls=-1).shuffle(1024)
        return ds.batch(64).prefetch(-1)
    """
    assert lines_of("map-before-batch", code) == [7]


def test_parse_map_that_a_per_element_step_depends_on_is_not_reported():
    code = """\
    import tensorflow as tf

    FEATURES = {"image": tf.io.FixedLenFeature([], tf.string), "y": tf.io.FixedLenFeature([], tf.int64)}


    def parse(record):
        return tf.io.parse_single_example(record, FEATURES)


    def decode(parsed):
        return tf.io.decode_jpeg(parsed["image"], channels=3), parsed["y"]


    def build_pipeline(records):
        decoded = records.map(parse, num_parallel_calls=-1).map(decode, num_parallel_calls=-1).batch(8)
        kept = records.map(parse, num_parallel_calls=-1).filter(lambda parsed: parsed["y"] > 0).batch(8)
        return decoded.prefetch(-1), kept.prefetch(-1)
    """
    assert lines_of("map-before-batch", code) == []


# ----- robustness ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "",
        "def build_pipeline(files:\n    return files\n",
        "ds = ds.map(lambda x: , num_parallel_calls=1)",
        "import threading\nfor for for",
        "\x00import threading",
        "\ud800",
        "(" * 10_000,
        "x" + ".map(f)" * 20_000,
        "a" + " + a" * 100_000,
        "}{][)(:::",
        "\t\t\n  \x0c\n" * 50,
    ],
    ids=[
        "empty",
        "unclosed-paren",
        "bad-lambda",
        "keywords",
        "null-byte",
        "lone-surrogate",
        "deep-nesting",
        "long-chain",
        "long-expression",
        "brackets",
        "whitespace",
    ],
)
def test_syntax_errors_and_garbage_give_no_findings(code: str):
    assert lint_pipeline_code(code, source_is_files=True) == []


def test_64_kib_of_random_tokens_and_mutated_pipelines_never_raise():
    generator = random.Random(20240611)  # noqa: S311 - a reproducible fuzz input, not a secret
    tokens = [
        *EXPERT_IMAGE_PIPELINE.split(),
        *NAIVE_IMAGE_PIPELINE.split(),
        "\n",
        "\n    ",
        "(",
        ")",
        ":",
        "lambda",
        ".map(",
        ".cache()",
        ".batch(",
        "import threading",
        "from_generator",
        "=",
        ",",
        "'",
        '"""',
        "\\",
        "é",
        "\x00",
    ]
    random_text = " ".join(generator.choice(tokens) for _ in range(16_000))[: 64 * 1024]
    assert len(random_text) == 64 * 1024
    assert isinstance(lint_pipeline_code(random_text, source_is_files=True), list)

    lines = EXPERT_IMAGE_PIPELINE.splitlines()
    for _ in range(200):
        mutated = list(lines)
        for _ in range(generator.randint(1, 4)):
            position = generator.randrange(len(mutated))
            mutated[position] = mutated[position][: generator.randrange(len(mutated[position]) + 1)]
        findings = lint_pipeline_code("\n".join(mutated), source_is_files=generator.random() < 0.5)
        assert all(finding.rule in RULES for finding in findings)


def test_a_64_kib_valid_program_with_long_pipelines_is_analysed():
    steps = "ds = ds.map(lambda x: x + 1.0).cache()\nds = ds.batch(2)\n"
    body = steps * (64 * 1024 // len(steps))
    code = "import tensorflow as tf\n\n\ndef build_pipeline(ds):\n" + textwrap.indent(body, "    ") + "    return ds\n"
    findings = lint_pipeline_code(code, source_is_files=True)
    assert {finding.rule for finding in findings} == {"no-parallel-calls", "map-before-batch", "no-final-prefetch"}


# ----- the deck's reference solutions --------------------------------------------------------------------


def deck_exercises() -> list[dict[str, Any]]:
    deck = yaml.safe_load(DECK_PATH.read_text(encoding="utf-8"))
    return [exercise for lesson in deck["lessons"] for exercise in lesson.get("exercises", [])]


def lint_reference(exercise: dict[str, Any], kind: str) -> list[Finding]:
    spec = exercise["spec"]
    return lint_pipeline_code(
        spec["references"][kind],
        source_is_files=spec["data"]["generator"].startswith("tfrecord"),
        forbidden_imports=spec["rules"].get("forbidden_imports", ()),
    )


EXERCISES = deck_exercises()
EXERCISE_IDS = [exercise["slug"] for exercise in EXERCISES]


def test_the_deck_has_reference_solutions_to_check():
    assert len(EXERCISES) >= 4
    assert all({"naive", "expert"} <= set(exercise["spec"]["references"]) for exercise in EXERCISES)


@pytest.mark.parametrize("exercise", EXERCISES, ids=EXERCISE_IDS)
def test_expert_reference_in_the_deck_has_no_findings(exercise: dict[str, Any]):
    assert [finding.as_dict() for finding in lint_reference(exercise, "expert")] == []


NAIVE_REFERENCE_RULES = {
    "tfrecord-image-pipeline": {"no-parallel-calls", "no-final-prefetch"},
    "many-file-interleave": {"no-parallel-calls", "no-final-prefetch", "map-before-batch"},
    "generator-simulator-source": {"no-final-prefetch"},
    "cache-then-augment": {"no-parallel-calls", "no-final-prefetch"},
    "records-that-do-not-parse": {"no-parallel-calls", "no-final-prefetch"},
    "normalize-without-leakage": {"no-parallel-calls", "map-before-batch", "no-final-prefetch"},
    "reproducible-epochs": {"no-parallel-calls", "map-before-batch", "no-final-prefetch"},
    "sharded-input": {"no-parallel-calls", "map-before-batch", "no-final-prefetch"},
}


@pytest.mark.parametrize("exercise", EXERCISES, ids=EXERCISE_IDS)
def test_naive_reference_in_the_deck_shows_its_known_pitfalls(exercise: dict[str, Any]):
    expected = NAIVE_REFERENCE_RULES.get(exercise["slug"])
    if expected is None:
        pytest.skip("no expectation recorded for this exercise's naive reference")
    assert {finding.rule for finding in lint_reference(exercise, "naive")} == expected


# ----- records that may not parse ---------------------------------------------------------------------

RECORD_PARSER = """\
import tensorflow as tf

SCHEMA = {
    "features": tf.io.FixedLenFeature([8], tf.float32),
    "label": LABEL,
}


def parse(record):
    parsed = tf.io.parse_single_example(record, SCHEMA)
    return parsed["features"], parsed["label"]


def build_pipeline(files):
    records = tf.data.TFRecordDataset(files)
    PIPELINE
    return examples.batch(8).prefetch(2)
"""


def record_pipeline(label: str = "tf.io.FixedLenFeature([], tf.int64)", pipeline: str = "") -> str:
    steps = pipeline or "examples = records.map(parse, num_parallel_calls=4).ignore_errors()"
    return RECORD_PARSER.replace("LABEL", label).replace("PIPELINE", steps)


def test_a_schema_default_is_reported_on_its_line():
    code = record_pipeline(label="tf.io.FixedLenFeature([], tf.int64, default_value=-1)")
    assert lines_of("schema-default", code) == [5]
    assert messages_of("schema-default", code)[0].startswith("FixedLenFeature(..., default_value=...) fills in")
    assert lines_of("schema-default", record_pipeline()) == []
    # A variable-length feature has no default to give: nothing to report.
    assert lines_of("schema-default", record_pipeline(label="tf.io.VarLenFeature(tf.int64)")) == []


def test_ignore_errors_before_the_parsing_map_is_reported_and_after_it_is_not():
    before = record_pipeline(pipeline="examples = records.ignore_errors().map(parse, num_parallel_calls=4)")
    assert lines_of("ignore-errors-before-parse", before) == [16]
    assert "comes before map(parse), which parses the records" in messages_of("ignore-errors-before-parse", before)[0]
    assert lines_of("ignore-errors-before-parse", record_pipeline()) == []
    # Once more after the parse: the parse's errors are ignored there.
    both = record_pipeline(
        pipeline="examples = records.ignore_errors().map(parse, num_parallel_calls=4).ignore_errors()"
    )
    assert lines_of("ignore-errors-before-parse", both) == []
    # A map that does not parse records is not the one ignore_errors() must follow.
    not_parsing = record_pipeline(
        pipeline="examples = records.ignore_errors().map(tf.strings.length, num_parallel_calls=4)"
    )
    assert lines_of("ignore-errors-before-parse", not_parsing) == []
