"""The exercise over records that do not parse: the references pass, and each
way of getting bad records wrong (crashing on them, letting them through, dropping good ones, not
counting them) fails with a message that names the fault."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.grading import (
    GRADER_DATA_DIR,
    RECORDS,
    reference,
    requires_sandbox,
)
from worker.datagen import exercise_data_ensure
from worker.grader import Grader
from worker.observation_rules import BAD_RECORD_KINDS

pytestmark = [requires_sandbox, pytest.mark.grader]

EXPERT = reference(RECORDS, "expert")
COUNTER = "lambda: int(read.numpy() - kept.numpy())"
BAD_PER_EPOCH = sum(RECORDS.spec["data"]["bad_records"].values())


def variant(old: str, new: str) -> str:
    assert old in EXPERT
    return EXPERT.replace(old, new)


def outcome(result: dict) -> tuple[str, dict[str, str], set[str]]:
    failed = {check["name"]: check["message"] for check in result["checks"] if not check["passed"] and check["ran"]}
    not_run = {check["name"] for check in result["checks"] if not check["ran"]}
    return result["verdict"], failed, not_run


def test_the_data_holds_every_kind_of_bad_record_among_the_good_ones():
    manifest = exercise_data_ensure(GRADER_DATA_DIR, RECORDS.slug, RECORDS.spec).manifest()
    assert {record["kind"] for record in manifest["bad_records"]} == set(BAD_RECORD_KINDS)
    assert len(manifest["bad_records"]) == BAD_PER_EPOCH
    # Spread through the files, not gathered at the end of one.
    assert len({record["file"] for record in manifest["bad_records"]}) > 1
    assert manifest["examples"] == RECORDS.spec["rules"]["batches_per_epoch"] * 64


@pytest.mark.parametrize("which", ["naive", "expert"])
def test_the_references_skip_and_count_every_bad_record(checking_grader: Grader, which: str):
    result = checking_grader.grade(RECORDS, reference(RECORDS, which))
    assert result["verdict"] == "accepted", result
    skipped = next(check for check in result["checks"] if check["name"] == "bad_records_skipped")
    assert skipped["passed"] and f"{BAD_PER_EPOCH}, {2 * BAD_PER_EPOCH} after epochs 1 to 2" in skipped["message"]


def test_a_pipeline_that_stops_at_the_first_bad_record_is_told_so(checking_grader: Grader):
    verdict, failed, not_run = outcome(checking_grader.grade(RECORDS, variant(".ignore_errors()", "")))
    assert verdict == "wrong_output"
    assert set(failed) == {"bad_records_skipped"}
    assert failed["bad_records_skipped"].startswith("The pipeline stopped in epoch 1 with an error")
    assert "One bad record must not end the epoch" in failed["bad_records_skipped"]
    # TensorFlow's wrapping (function and node names, the op) is left out of what the learner reads.
    assert "function_node" not in failed["bad_records_skipped"] and "[[" not in failed["bad_records_skipped"]
    assert {"every_example_once", "shuffled"} <= not_run


def test_a_default_for_a_missing_label_lets_bad_records_through_and_says_so(checking_grader: Grader):
    defaulted = variant("tf.io.FixedLenFeature([], tf.int64)", "tf.io.FixedLenFeature([], tf.int64, default_value=0)")
    verdict, failed, _ = outcome(checking_grader.grade(RECORDS, defaulted))
    missing = RECORDS.spec["data"]["bad_records"]["missing_label"]
    assert verdict == "wrong_output"
    # Each let through unless the shuffle puts it in the remainder the last batch drops.
    stray = re.match(r"epoch 1: (\d+) examples? matche?s? no input example", failed["every_example_once"])
    assert stray is not None, failed["every_example_once"]
    assert 1 <= int(stray.group(1)) <= missing
    assert "bad records got through" in failed["every_example_once"]
    # The expert's counter is read less kept in full batches: the 4 let through are still counted,
    # as the remainder the last batch drops; the output check is what tells.


def test_features_padded_to_length_let_the_wrong_shapes_through(checking_grader: Grader):
    padded = variant(
        '"features": tf.io.FixedLenFeature([256], tf.float32),', '"features": tf.io.VarLenFeature(tf.float32),'
    ).replace(
        'return parsed["features"], tf.cast(parsed["label"], tf.int32)',
        'features = tf.sparse.to_dense(parsed["features"])[:256]\n'
        "        features = tf.pad(features, [[0, 256 - tf.shape(features)[0]]])\n"
        "        features = tf.ensure_shape(features, [256])\n"
        '        return features, tf.cast(parsed["label"], tf.int32)',
    )
    verdict, failed, _ = outcome(checking_grader.grade(RECORDS, padded))
    wrong_length = RECORDS.spec["data"]["bad_records"]["wrong_feature_count"]
    assert verdict == "wrong_output"
    assert failed["every_example_once"].startswith(f"epoch 1: {wrong_length} examples match no input example")


def test_good_records_dropped_with_the_bad_ones_are_counted(checking_grader: Grader):
    dropping = variant("examples = examples.ignore_errors()", "examples = examples.ignore_errors().skip(64)")
    verdict, failed, _ = outcome(checking_grader.grade(RECORDS, dropping))
    assert verdict == "wrong_output"
    assert failed["batches_per_epoch"] == (
        "epoch 1 had 63 batches, expected 64 (every example once per epoch, in full batches)."
    )
    assert failed["every_example_once"].endswith("64 input examples never appear.")


@pytest.mark.parametrize(
    ("counter", "message"),
    [
        ("lambda: 0", f"skipped gave 0 after epoch 1, expected {BAD_PER_EPOCH}: each epoch holds"),
        ("read", "count only the records you skip, once each"),
        ("lambda: 'many'", "skipped could not be read after epoch 1: it gave str many, not a number"),
        ("lambda: 1 / 0", "skipped could not be read after epoch 1: reading it raised ZeroDivisionError"),
    ],
    ids=["never counts", "counts every record read", "not a number", "raises"],
)
def test_a_counter_that_does_not_count_the_skipped_records_fails(checking_grader: Grader, counter, message):
    verdict, failed, _ = outcome(checking_grader.grade(RECORDS, variant(COUNTER, counter)))
    assert verdict == "wrong_output"
    assert set(failed) == {"bad_records_skipped"}
    assert message in failed["bad_records_skipped"]


def test_a_count_started_again_each_epoch_is_told_to_go_on(checking_grader: Grader):
    per_epoch = variant(
        f"return batches.prefetch(AUTOTUNE), {COUNTER}",
        "told = [0]\n\n"
        "    def since_last_read():\n"
        "        total = int(read.numpy() - kept.numpy())\n"
        "        new, told[0] = total - told[0], total\n"
        "        return new\n\n"
        "    return batches.prefetch(AUTOTUNE), since_last_read",
    )
    verdict, failed, _ = outcome(checking_grader.grade(RECORDS, per_epoch))
    assert verdict == "wrong_output", json.dumps(failed)
    assert failed["bad_records_skipped"].startswith(f"skipped gave {BAD_PER_EPOCH} after epoch 2")
    assert "do not start it again each epoch" in failed["bad_records_skipped"]


def test_returning_the_dataset_alone_names_the_pair_expected(checking_grader: Grader):
    result = checking_grader.grade(RECORDS, variant(f", {COUNTER}", ""))
    assert result["verdict"] == "runtime_error"
    assert "expected a pair (dataset, skipped)" in result["message"]
