"""The exercise over a training and a validation split: the references pass,
and each way of letting the splits meet (statistics over both, validation normalized with its own,
validation examples in the training data, statistics from part of the training data) fails with a
message that names it."""

from __future__ import annotations

import pytest

from tests.support.grading import (
    SPLITS,
    reference,
    requires_sandbox,
)
from worker.grader import Grader

pytestmark = [requires_sandbox, pytest.mark.grader]

EXPERT = reference(SPLITS, "expert")
RETURN = "return batches(training.shuffle(4096)), batches(tf.data.TFRecordDataset(validation_files))"
SPLIT_CHECKS = {
    "normalized_with_training_statistics",
    "no_validation_in_training",
    "training_unchanged_by_validation",
    "validation_normalized",
}


def variant(old: str, new: str) -> str:
    assert old in EXPERT
    return EXPERT.replace(old, new)


def failed(result: dict) -> dict[str, str]:
    return {check["name"]: check["message"] for check in result["checks"] if not check["passed"] and check["ran"]}


@pytest.mark.parametrize("which", ["naive", "expert"])
def test_the_references_pass_every_check_of_the_splits(checking_grader: Grader, which: str):
    result = checking_grader.grade(SPLITS, reference(SPLITS, which))
    assert result["verdict"] == "accepted", result
    assert {check["name"] for check in result["checks"] if check["passed"]} >= SPLIT_CHECKS


def test_statistics_over_both_splits_move_the_training_data_and_every_check_says_so(checking_grader: Grader):
    leaky = variant(
        "mean, std = training_statistics(train_files)",
        "mean, std = training_statistics(train_files + validation_files)",
    )
    result = checking_grader.grade(SPLITS, leaky)
    faults = failed(result)
    assert result["verdict"] == "wrong_output"
    # Not cut short after the first epoch: the checks of the splits need every dataset.
    assert {"training_unchanged_by_validation", "validation_normalized", "normalized_with_training_statistics"} <= set(
        faults
    )
    assert faults["training_unchanged_by_validation"].startswith(
        "With only the validation files changed (their values shifted, more examples), 4096 of 4096 training"
        " examples came out different"
    )
    assert "none of the validation ones" in faults["normalized_with_training_statistics"]
    assert "no_validation_in_training" not in faults


def test_validation_normalized_with_its_own_statistics_is_named(checking_grader: Grader):
    own = variant(
        RETURN,
        "own_mean, own_std = training_statistics(validation_files)\n"
        "    validation = tf.data.TFRecordDataset(validation_files).batch(64, drop_remainder=True).map(parse_records)\n"
        "    validation = validation.map(lambda features, labels: ((features - own_mean) / own_std, labels))\n"
        "    return batches(training.shuffle(4096)), validation",
    )
    result = checking_grader.grade(SPLITS, own)
    assert result["verdict"] == "wrong_output"
    assert set(failed(result)) == {"validation_normalized"}
    assert failed(result)["validation_normalized"] == (
        "validation: 512 examples match no input example (validation features must be normalized with the training"
        " split's mean and standard deviation, not with the validation split's own); 512 input examples never appear."
    )


def test_validation_examples_read_into_the_training_data_are_counted(checking_grader: Grader):
    mixed = variant(
        "tf.data.Dataset.from_tensor_slices(train_files)",
        "tf.data.Dataset.from_tensor_slices(train_files + validation_files)",
    )
    faults = failed(checking_grader.grade(SPLITS, mixed))
    assert faults["no_validation_in_training"].startswith("epoch 1 of the training data holds 512 validation examples")
    assert faults["batches_per_epoch"].startswith("epoch 1 had 72 batches, expected 64")


def test_statistics_from_part_of_the_training_split_are_told_by_the_moments(checking_grader: Grader):
    sampled = variant(
        "records = tf.data.TFRecordDataset(train_files).batch(1024)",
        "records = tf.data.TFRecordDataset(train_files).take(1024).batch(1024)",
    )
    faults = failed(checking_grader.grade(SPLITS, sampled))
    assert faults["normalized_with_training_statistics"].startswith("After normalization, training feature")
    # The training data does not depend on the validation split, only on too little of its own.
    assert "training_unchanged_by_validation" not in faults and "no_validation_in_training" not in faults


def test_returning_one_dataset_names_the_pair_expected(checking_grader: Grader):
    result = checking_grader.grade(SPLITS, variant(RETURN, "return batches(training.shuffle(4096))"))
    assert result["verdict"] == "runtime_error"
    assert "expected a pair of tf.data.Dataset: (training, validation)" in result["message"]
