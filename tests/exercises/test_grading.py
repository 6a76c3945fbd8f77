"""Grading real submissions in real sandboxes: references pass, each kind of mistake gets its
verdict and a message a learner can act on."""

from __future__ import annotations

import json
import statistics
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from openapi_schema_validator import OAS31Validator

from tests.support.grading import (
    CACHE,
    IMAGES,
    RESULT_KEYS,
    SHARDS,
    SIMULATOR,
    grader_config_for_tests,
    reference,
    requires_sandbox,
)
from worker.grader import Grader, Progress
from worker.observation_rules import CUT_SHORT

pytestmark = [requires_sandbox, pytest.mark.grader]

IMAGE_PARSER = """
import tensorflow as tf

FEATURES = {
    "image": tf.io.FixedLenFeature([], tf.string),
    "label": tf.io.FixedLenFeature([], tf.int64),
}


def parse(record):
    parsed = tf.io.parse_single_example(record, FEATURES)
    image = tf.io.decode_jpeg(parsed["image"], channels=3)
    return SCALE, tf.cast(parsed["label"], tf.int32)


def build_pipeline(files):
    records = tf.data.TFRecordDataset(files)
    records = SHUFFLE
    return records.map(parse, num_parallel_calls=tf.data.AUTOTUNE).BATCH.prefetch(2)
"""


def image_pipeline(
    scale: str = "tf.image.convert_image_dtype(image, tf.float32)",
    shuffle: str = "records.shuffle(1024)",
    batch: str = "batch(32, drop_remainder=True)",
) -> str:
    return IMAGE_PARSER.replace("SCALE", scale).replace("SHUFFLE", shuffle).replace("BATCH", batch)


def failed_checks(result: dict) -> dict[str, str]:
    return {check["name"]: check["message"] for check in result["checks"] if not check["passed"] and check["ran"]}


def checks_not_run(result: dict) -> dict[str, str]:
    return {check["name"]: check["message"] for check in result["checks"] if not check["ran"]}


@pytest.mark.parametrize("exercise", [IMAGES, SHARDS, SIMULATOR, CACHE], ids=lambda exercise: exercise.slug)
@pytest.mark.parametrize("which", ["naive", "expert"])
def test_reference_solutions_are_accepted(checking_grader: Grader, exercise, which):
    result = checking_grader.grade(exercise, reference(exercise, which))
    assert result["verdict"] == "accepted", result
    assert set(result) == RESULT_KEYS
    assert result["checks"] and all(check["passed"] for check in result["checks"])
    assert result["score"]["correctness"] == exercise.spec["scoring"]["correctness"]
    assert result["device"]


def test_other_correct_scalings_are_accepted_within_the_pixel_tolerance(checking_grader: Grader):
    for scale in (
        "tf.cast(image, tf.float32) / 255.0",
        "tf.image.resize(tf.image.convert_image_dtype(image, tf.float32), [224, 224])",
    ):
        result = checking_grader.grade(IMAGES, image_pipeline(scale=scale))
        assert result["verdict"] == "accepted", (scale, result)


def test_uint8_images_are_wrong_output_with_the_batch_and_the_fix(checking_grader: Grader):
    result = checking_grader.grade(IMAGES, image_pipeline(scale="image"))
    assert result["verdict"] == "wrong_output"
    failures = failed_checks(result)
    assert failures["element_spec"] == "batch 1: images are uint8, expected float32 scaled to [0, 1]."
    # The run went on with the pixels converted, so what else is wrong is told at once: unscaled values.
    assert "divide by 255" in failures["value_range"]
    assert set(failures) == {"element_spec", "value_range", "every_example_once"}
    # No unscaled example matches an input one, so their order cannot be judged.
    assert checks_not_run(result) == {
        "shuffled": "Not run: needs output examples that match the input ones (see every_example_once)."
    }


def test_two_faults_are_both_reported_at_once(checking_grader: Grader):
    code = image_pipeline(shuffle="records").replace('tf.cast(parsed["label"], tf.int32)', 'parsed["label"]')
    result = checking_grader.grade(IMAGES, code)
    assert result["verdict"] == "wrong_output"
    failures = failed_checks(result)
    assert failures.keys() == {"element_spec", "shuffled"}, result["checks"]
    assert failures["element_spec"] == "batch 1: labels are int64, expected int32."
    assert "file order" in failures["shuffled"]
    assert result["message"] == f"2 checks failed. First: {failures['element_spec']}"
    assert result["score"]["correctness"] == 0.0
    assert result["score"]["correctness_max"] == IMAGES.spec["scoring"]["correctness"]


def test_a_first_epoch_that_fails_cuts_the_run_short_and_says_what_it_could_not_check(checking_grader: Grader):
    code = image_pipeline().replace('tf.cast(parsed["label"], tf.int32)', 'parsed["label"]')
    result = checking_grader.grade(IMAGES, code)
    assert result["verdict"] == "wrong_output"
    checks = {check["name"]: check for check in result["checks"]}
    assert checks["element_spec"]["message"] == "batch 1: labels are int64, expected int32."
    # What the first epoch shows is told; whether the second epoch reshuffles is left for the next try.
    assert checks["every_example_once"]["passed"] and checks["batches_per_epoch"]["passed"]
    assert checks["shuffled"]["ran"] is False
    assert checks["shuffled"]["message"] == f"Not run: {CUT_SHORT}."
    # Its trace was still being written when the run was cut short: a wrong output has no profile.
    assert "profile" not in result


def test_unscaled_float_images_fail_the_value_range(checking_grader: Grader):
    result = checking_grader.grade(IMAGES, image_pipeline(scale="tf.cast(image, tf.float32)"))
    assert result["verdict"] == "wrong_output"
    failures = failed_checks(result)
    assert "divide by 255" in failures["value_range"]
    assert "match no input example" in failures["every_example_once"]


def test_unshuffled_pipeline_fails_the_shuffle_check(checking_grader: Grader):
    result = checking_grader.grade(IMAGES, image_pipeline(shuffle="records"))
    assert result["verdict"] == "wrong_output"
    assert set(failed_checks(result)) == {"shuffled"}
    assert "file order" in result["message"]


def test_shuffle_that_repeats_its_order_every_epoch_fails(checking_grader: Grader):
    result = checking_grader.grade(
        IMAGES, image_pipeline(shuffle="records.shuffle(1024, seed=1, reshuffle_each_iteration=False)")
    )
    assert failed_checks(result) == {
        "shuffled": "Epochs 1 and 2 have the same order: shuffle must reshuffle each iteration"
        " (keep reshuffle_each_iteration on, and do not cache after shuffle)."
    }


def test_a_short_last_batch_is_named_with_its_fix(checking_grader: Grader):
    result = checking_grader.grade(
        IMAGES, image_pipeline(shuffle="records.take(1000).shuffle(1000)", batch="batch(32)")
    )
    assert result["verdict"] == "wrong_output"
    assert "drop_remainder=True" in failed_checks(result)["element_spec"]
    # Nothing after a wrong shape can be matched: those checks say they did not run, and why.
    not_run = checks_not_run(result)
    assert set(not_run) == {"batches_per_epoch", "every_example_once", "shuffled", "value_range"}
    assert all(message.startswith("Not run: needs batches of the right") for message in not_run.values())
    assert result["message"] == failed_checks(result)["element_spec"]


def test_duplicated_and_missing_examples_are_counted_per_epoch(checking_grader: Grader):
    # 16 examples of the first shard replace 16 of the last: the count is right, the multiset is not.
    shuffle = "records.take(1008).concatenate(records.take(16)).shuffle(1024)"
    result = checking_grader.grade(IMAGES, image_pipeline(shuffle=shuffle))
    assert failed_checks(result) == {
        "every_example_once": "epoch 1: 16 examples appear more than once; 16 input examples never appear."
    }


def test_caching_after_the_random_flip_freezes_the_augmentation(checking_grader: Grader):
    code = reference(CACHE, "expert").replace(
        """    examples = examples.cache()
    # After the cache: a new order and new flips every epoch.
    examples = examples.shuffle(256)
    examples = examples.map(augment, num_parallel_calls=AUTOTUNE)""",
        """    examples = examples.map(augment, num_parallel_calls=AUTOTUNE)
    examples = examples.cache()
    examples = examples.shuffle(256)""",
    )
    assert code != reference(CACHE, "expert")
    result = checking_grader.grade(CACHE, code)
    assert result["verdict"] == "wrong_output"
    assert "after cache()" in failed_checks(result)["augmentation_varies"]
    assert any(finding["rule"] == "cache-after-augmentation" for finding in result["lint"])


def test_a_pipeline_without_cache_fails_once_the_files_are_removed(checking_grader: Grader):
    code = reference(CACHE, "naive").replace("examples = examples.cache()", "")
    result = checking_grader.grade(CACHE, code)
    assert result["verdict"] == "wrong_output"
    assert "Epoch 2 failed after the TFRecord files were removed" in failed_checks(result)["served_from_cache"]


def test_simulator_without_output_signature_and_called_once_fails(checking_grader: Grader):
    code = """
import tensorflow as tf


def build_pipeline(make_source):
    items = list(make_source())
    observations = tf.constant([item[0] for item in items])
    labels = tf.constant([item[1] for item in items], dtype=tf.int32)
    return tf.data.Dataset.from_tensor_slices((observations, labels)).batch(16, drop_remainder=True)
"""
    result = checking_grader.grade(SIMULATOR, code)
    failures = failed_checks(result)
    assert result["verdict"] == "wrong_output"
    assert set(failures) == {"from_generator_signature", "source_called_once_per_epoch"}
    assert "called 1 time over 2 epochs" in failures["source_called_once_per_epoch"]


def test_interleave_without_mixing_shards_fails_the_first_batch_check(checking_grader: Grader):
    code = reference(SHARDS, "naive").replace("records = records.shuffle(16384)", "records = records.shuffle(64)")
    result = checking_grader.grade(SHARDS, code)
    assert result["verdict"] == "wrong_output"
    assert "expected at least 8: read several files at once" in failed_checks(result)["mixes_shards"]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("def build_pipeline(files:\n    pass\n", "Syntax error on line 1"),
        ("import tensorflow as tf\n\ndef make_pipeline(files):\n    return None\n", "named build_pipeline"),
        ("import threading\n\ndef build_pipeline(files):\n    return None\n", "line 1: importing threading"),
        ("from concurrent.futures import ThreadPoolExecutor\ndef build_pipeline(files): ...\n", "concurrent.futures"),
    ],
)
def test_code_that_cannot_be_run_is_rejected_without_running(checking_grader: Grader, code, expected):
    result = checking_grader.grade(IMAGES, code)
    assert result["verdict"] == "rejected"
    assert expected in result["message"]


def test_an_exception_reports_the_learners_line_and_error(checking_grader: Grader):
    code = (
        "import tensorflow as tf\n\n\n"
        "def build_pipeline(files):\n"
        "    return tf.data.TFRecordDataset(files).map(undefined_name)\n"
    )
    result = checking_grader.grade(IMAGES, code)
    assert result["verdict"] == "runtime_error"
    assert "line 5, in build_pipeline" in result["message"]
    assert "NameError: name 'undefined_name' is not defined" in result["message"]


def test_returning_something_else_than_a_dataset_is_a_runtime_error(checking_grader: Grader):
    result = checking_grader.grade(IMAGES, "def build_pipeline(files):\n    return files\n")
    assert result["verdict"] == "runtime_error"
    assert "returned list, expected a tf.data.Dataset" in result["message"]


def test_printed_output_of_the_checking_run_comes_back(checking_grader: Grader):
    code = reference(SIMULATOR, "expert").replace(
        "def build_pipeline(make_source):", 'print("hello from the pipeline")\n\n\ndef build_pipeline(make_source):'
    )
    result = checking_grader.grade(SIMULATOR, code)
    assert result["verdict"] == "accepted"
    assert "hello from the pipeline" in result["output"]


def test_timing_stops_once_the_calm_rounds_agree_and_the_next_grading_tells_its_time_left_at_once():
    config = grader_config_for_tests(
        timing_rounds=3,
        timing_min_rounds=2,
        timing_agreement=10.0,
        # Every round counts as calm here: what is tested is when timing stops.
        max_busy_fraction=1.0,
        warmup_epochs=0,
        warm_processes=1,
        run_seconds=30.0,
    )
    grader = Grader(config)
    first: list[Progress] = []
    second: list[Progress] = []
    try:
        agreed = grader.grade(SIMULATOR, reference(SIMULATOR, "expert"), first.append)["timing"]["host"]
        grader.config = replace(config, timing_agreement=0.0)
        never = grader.grade(SIMULATOR, reference(SIMULATOR, "expert"), second.append)["timing"]["host"]
    finally:
        grader.close()
    assert (agreed["rounds_timed"], agreed["rounds_planned"], agreed["stopped_early"]) == (2, 3, True)
    assert agreed["retimed"] == 0 and all(record["used"] for record in agreed["rounds"])
    assert (never["rounds_timed"], never["stopped_early"]) == (3, False)
    # The first grading of the exercise cannot tell its time left before a run is timed; the next one
    # can from the start, from how long the first took.
    assert first[0].phase == "checking" and first[0].seconds_left is None
    assert second[0].phase == "checking" and second[0].seconds_left is not None and second[0].seconds_left > 0


def test_timed_grading_reports_timing_speedups_and_score():
    grader = Grader(grader_config_for_tests(timing_rounds=1, warm_processes=1, run_seconds=30.0))
    phases: list[Progress] = []
    try:
        result = grader.grade(SIMULATOR, reference(SIMULATOR, "expert"), phases.append)
    finally:
        grader.close()
    assert result["verdict"] == "accepted", result
    timing = result["timing"]
    assert set(timing) == {"submission", "naive", "expert", "host", "rewrites_off", "note"}
    assert timing["rewrites_off"] is True
    for figures in (timing["submission"], timing["naive"], timing["expert"]):
        assert figures["measured_epochs"] == 1
        assert 0 < figures["first_batch_seconds"] < figures["total_seconds"]
        # 40 batches with a 10 ms step each: an epoch cannot be faster than 0.4 s.
        assert figures["epoch_seconds"] >= 0.4
        assert figures["batches_per_second"] == pytest.approx(40 / figures["epoch_seconds"], rel=0.05)
        assert 0 <= figures["input_wait_fraction"] < 1
    speedup = result["speedup"]
    assert speedup["vs_naive"] == pytest.approx(
        timing["naive"]["epoch_seconds"] / timing["submission"]["epoch_seconds"], rel=0.01
    )
    assert result["score"]["speed_timed"] is True
    # What a client is promised: the result as stored is what the OpenAPI schema describes.
    schema = SchemaGenerator().get_schema(public=True)
    validator = OAS31Validator({"$ref": "#/components/schemas/GradingResultOutput", "components": schema["components"]})
    assert [error.message for error in validator.iter_errors(result)] == []
    assert result["score"]["total"] == result["score"]["correctness"] + result["score"]["speed"]
    assert phases[0].phase == "checking" and "timing" in {progress.phase for progress in phases}
    # Each report says what is being done, with its counts; timing runs count up to all of them,
    # with the time left once one run has been timed. A grading in another test process may hold
    # the host's timing CPUs for a while: that wait is told without counts.
    assert all(progress.label for progress in phases), phases
    phases = [progress for progress in phases if not progress.label.startswith("Waiting for the timing CPUs")]
    assert all(progress.total for progress in phases), phases
    timed = [progress for progress in phases if progress.phase == "timing"]
    assert [progress.total for progress in timed] == [3] * len(timed)
    assert [progress.done for progress in timed] == sorted(progress.done or 0 for progress in timed)
    assert timed[0].seconds_left is None and timed[-1].seconds_left is not None
    assert timed[0].label == "Timing round 1 of 1: " + timed[0].label.split(": ", 1)[1]


def test_patching_the_clock_and_sleep_does_not_change_the_timing():
    grader = Grader(grader_config_for_tests(timing_rounds=1, warm_processes=1, run_seconds=30.0))
    patched = (
        "import time\n"
        "time.sleep = lambda seconds: None\n"
        "time.perf_counter = lambda: 0.0\n"
        "time.monotonic = lambda: 0.0\n" + reference(SIMULATOR, "naive")
    )
    try:
        result = grader.grade(SIMULATOR, patched)
    finally:
        grader.close()
    assert result["verdict"] == "accepted", result
    # The step still sleeps 10 ms per batch and the clock is the grader's own: a patched clock
    # would give zero or negative times, a patched sleep a time below 40 x 10 ms.
    assert result["timing"]["submission"]["epoch_seconds"] >= 0.4
    assert result["timing"]["submission"]["first_batch_seconds"] > 0


def test_the_references_are_timed_once_per_host_and_later_gradings_calibrate_against_them(tmp_path: Path):
    config = grader_config_for_tests(
        timing_rounds=2,
        timing_min_rounds=2,
        timing_agreement=0.0,
        max_busy_fraction=1.0,
        warm_processes=1,
        run_seconds=30.0,
        baselines=True,
        baseline_dir=tmp_path,
        # The calibration is not what is tested here (the next grading may run beside other tests).
        baseline_drift_limit=100.0,
    )
    grader = Grader(config)
    try:
        first = grader.grade(SIMULATOR, reference(SIMULATOR, "expert"))
        second = grader.grade(SIMULATOR, reference(SIMULATOR, "naive"))
        # A host whose expert runs no longer match what was stored times all three again.
        grader.config = replace(config, baseline_drift_limit=-1.0)
        third = grader.grade(SIMULATOR, reference(SIMULATOR, "expert"))
    finally:
        grader.close()
    assert [result["verdict"] for result in (first, second, third)] == ["accepted"] * 3
    hosts = [result["timing"]["host"] for result in (first, second, third)]
    assert hosts[0]["references"] == {"timed": "this grading", "why": "none stored"}
    assert all(sorted(record["order"]) == ["expert", "naive", "submission"] for record in hosts[0]["rounds"])
    assert len(list(tmp_path.glob("generator-simulator-source-*.json"))) == 1
    # The next grading runs no naive reference: its time is the stored one, scaled by the calibration.
    assert hosts[1]["references"]["timed"] == "stored"
    assert all(sorted(record["order"]) == ["expert", "submission"] for record in hosts[1]["rounds"])
    stored = first["speedup"]["expert_vs_naive"]
    assert second["speedup"]["expert_vs_naive"] == pytest.approx(stored, rel=0.001)
    for record in hosts[1]["rounds"]:
        seconds = record["epoch_seconds"]
        scale = seconds["expert"] / first["timing"]["expert"]["epoch_seconds"]
        assert seconds["naive"] == pytest.approx(stored * first["timing"]["expert"]["epoch_seconds"] * scale, rel=0.01)
    # The speedup against the naive reference comes from those stored-and-scaled times, round by round.
    ratios = [record["epoch_seconds"]["naive"] / record["epoch_seconds"]["submission"] for record in hosts[1]["rounds"]]
    assert second["speedup"]["vs_naive"] == pytest.approx(statistics.median(ratios), rel=0.01)
    assert hosts[2]["references"]["timed"] == "this grading"
    assert "than stored" in hosts[2]["references"]["why"]
    assert all(sorted(record["order"]) == ["expert", "naive", "submission"] for record in hosts[2]["rounds"])


def test_an_accepted_result_says_where_the_time_goes_stage_by_stage():
    grader = Grader(grader_config_for_tests(timing_rounds=1, warm_processes=1, run_seconds=30.0))
    try:
        result = grader.grade(SIMULATOR, reference(SIMULATOR, "naive"))
    finally:
        grader.close()
    assert result["verdict"] == "accepted", result
    profile = result["profile"]
    kinds = [stage["kind"] for stage in profile["stages"]]
    # The naive simulator pipeline is from_generator, then batch; the Python source is the slow part.
    assert "from_generator" in kinds and kinds[-1] == "batch", kinds
    slowest = next(stage for stage in profile["stages"] if stage["path"] == profile["slowest"])
    assert slowest["kind"] == "from_generator"
    assert profile["batches"] == 40
    bound = profile["input_bound"]
    assert bound["input_wait_fraction"] == pytest.approx(
        result["timing"]["submission"]["input_wait_fraction"], abs=0.001
    )
    assert bound["verdict"] in {"moderately", "highly"}
    assert profile["advice"].startswith("The slowest stage is Generator (from_generator")


def test_the_references_are_refreshed_between_gradings_and_never_during_one(tmp_path: Path):
    config = grader_config_for_tests(
        timing_rounds=1,
        warm_processes=1,
        run_seconds=30.0,
        baselines=True,
        baseline_dir=tmp_path,
        # Every round counts as calm and every calibration as close: other tests may run beside this one.
        max_busy_fraction=1.0,
        baseline_drift_limit=100.0,
    )
    grader = Grader(config)
    grading_started = threading.Event()
    results: list[dict[str, Any]] = []

    def grade() -> None:
        results.append(grader.grade(SIMULATOR, reference(SIMULATOR, "expert"), lambda _: grading_started.set()))

    try:
        assert grader.references_refresh([SIMULATOR], older_than_seconds=3600) == [SIMULATOR.slug]
        (stored,) = tmp_path.glob("generator-simulator-source-*.json")
        measured_at = json.loads(stored.read_text())["measured_at"]
        # Fresh figures are left alone.
        assert grader.references_refresh([SIMULATOR], older_than_seconds=3600) == []
        grading = threading.Thread(target=grade)
        grading.start()
        assert grading_started.wait(60)
        # While a grading is under way, even figures of any age are left for later.
        assert grader.references_refresh([SIMULATOR], older_than_seconds=0) == []
        grading.join(120)
    finally:
        grader.close()
    assert results[0]["timing"]["host"]["references"]["timed"] == "stored"
    assert json.loads(stored.read_text())["measured_at"] == measured_at
