"""Which checks a grading makes of an observed run: each rule of the exercise gives its check, in order."""

from __future__ import annotations

from typing import Any

import numpy as np

from worker.checks import ExpectedExamples, batch_signatures, encode_array
from worker.observation_rules import evaluate_observation

RNG = np.random.default_rng(11)
PIXELS = RNG.integers(0, 256, size=(8, 16, 16, 3)).astype(np.uint8)
LABELS = np.arange(8) % 2
IMAGES = PIXELS.astype(np.float32) / 255.0
EXPECTED = ExpectedExamples(
    signatures=batch_signatures(IMAGES), labels=LABELS.astype(np.int64), shards=np.arange(8) // 4
)
SPEC: dict[str, Any] = {
    "element_spec": [
        {"name": "image", "dtype": "float32", "shape": [None, 16, 16, 3]},
        {"name": "label", "dtype": "int64", "shape": [None]},
    ],
    "rules": {"batches_per_epoch": 2, "value_range": [0.0, 1.0], "shuffled": True, "pixel_tolerance": 0.5},
}


def epoch(order: np.ndarray, batches: int = 2) -> dict[str, Any]:
    return {
        "batches": batches,
        "signatures": encode_array(batch_signatures(IMAGES[order])),
        "labels": encode_array(LABELS[order].astype(np.int64)),
        "min": float(IMAGES.min()),
        "max": float(IMAGES.max()),
        "first_batch_size": 4,
    }


def names_and_outcomes(checks: list[Any]) -> list[tuple[str, bool]]:
    return [(check.name, check.passed) for check in checks]


def test_a_correct_shuffled_run_passes_every_check_the_rules_ask_for_in_order():
    observation = {"epochs": [epoch(RNG.permutation(8)), epoch(RNG.permutation(8))]}
    checks = evaluate_observation(observation, EXPECTED, SPEC, code="")
    assert names_and_outcomes(checks) == [
        ("element_spec", True),
        ("batches_per_epoch", True),
        ("value_range", True),
        ("every_example_once", True),
        ("shuffled", True),
    ]


def test_a_wrong_batch_count_and_file_order_fail_their_own_checks():
    in_order = np.arange(8)
    observation = {"epochs": [epoch(in_order, batches=3), epoch(in_order, batches=3)]}
    outcomes = dict(names_and_outcomes(evaluate_observation(observation, EXPECTED, SPEC, code="")))
    assert outcomes["batches_per_epoch"] is False
    assert outcomes["shuffled"] is False
    assert outcomes["every_example_once"] is True


def test_a_run_stopped_by_its_element_spec_fails_that_check_and_says_the_others_did_not_run():
    observation = {"error": {"kind": "element_spec", "message": "labels have shape (3,), expected (4,)"}}
    checks = evaluate_observation(observation, EXPECTED, SPEC, code="")
    assert [(check.name, check.passed, check.ran) for check in checks] == [
        ("element_spec", False, True),
        ("batches_per_epoch", False, False),
        ("value_range", False, False),
        ("every_example_once", False, False),
        ("shuffled", False, False),
    ]
    assert checks[0].message == "labels have shape (3,), expected (4,)"
    assert all(check.message == "Not run: needs batches of the right structure and shape." for check in checks[1:])


def test_a_dtype_the_run_converted_fails_element_spec_and_every_other_check_still_runs():
    in_order = np.arange(8)
    observation = {
        "epochs": [epoch(in_order), epoch(in_order)],
        "spec_problems": ["batch 1: label are int32, expected int64"],
    }
    checks = evaluate_observation(observation, EXPECTED, SPEC, code="")
    assert [(check.name, check.passed, check.ran) for check in checks] == [
        ("element_spec", False, True),
        ("batches_per_epoch", True, True),
        ("value_range", True, True),
        ("every_example_once", True, True),
        ("shuffled", False, True),
    ]
    assert checks[0].message == "batch 1: label are int32, expected int64."


def test_a_run_with_no_epoch_runs_no_check():
    checks = evaluate_observation({"epochs": []}, EXPECTED, SPEC, code="")
    assert {check.name for check in checks} == {
        "element_spec",
        "batches_per_epoch",
        "value_range",
        "every_example_once",
        "shuffled",
    }
    assert not any(check.ran for check in checks)


def test_the_order_of_examples_that_match_no_input_is_not_judged():
    unscaled = {
        **epoch(np.arange(8)),
        "signatures": encode_array(batch_signatures(PIXELS.astype(np.float32))),
        "min": 0.0,
        "max": 255.0,
    }
    checks = {
        check.name: check for check in evaluate_observation({"epochs": [unscaled, unscaled]}, EXPECTED, SPEC, code="")
    }
    assert (checks["every_example_once"].passed, checks["every_example_once"].ran) == (False, True)
    assert (checks["value_range"].passed, checks["value_range"].ran) == (False, True)
    assert (checks["shuffled"].passed, checks["shuffled"].ran) == (False, False)


def test_checks_of_runs_after_the_main_epochs_say_so_when_the_run_did_not_get_there():
    sharded = {**SPEC, "rules": {**SPEC["rules"], "sharded": {"global_batch": 8, "configs": [[2, 2]]}}}
    observation = {"epochs": [epoch(RNG.permutation(8)), epoch(RNG.permutation(8))]}
    checks = {check.name: check for check in evaluate_observation(observation, EXPECTED, sharded, code="")}
    assert checks["shuffled"].passed
    for name in ("sharded_every_example_once", "per_replica_batches", "workers_shuffled"):
        assert not checks[name].ran
        assert checks[name].message == "Not run: needs every worker's pipeline, and the run did not get that far."
    # With every worker observed, the same rules judge what the workers gave.
    runs = [
        {"worker": worker, "ids": [5, 1, 7, 3][worker::2], "batch_sizes": [4], "bytes_read": 10, "parsed": 4}
        for worker in (0, 1)
    ]
    observation["sharding"] = [{"files": 2, "workers": 2, "per_replica": 4, "file_bytes": 20, "runs": runs}]
    checks = {check.name: check for check in evaluate_observation(observation, EXPECTED, sharded, code="")}
    assert checks["per_replica_batches"].passed and checks["sharded_before_reading"].passed
    assert checks["sharded_every_example_once"].message == (
        "With 2 workers over 2 files, 4 examples came from no worker: together the workers must give every example"
        " once per epoch."
    )
