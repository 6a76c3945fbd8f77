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


def test_a_run_that_failed_on_its_element_spec_gives_that_check_alone():
    observation = {"error": {"kind": "element_spec", "message": "labels are int32"}}
    checks = evaluate_observation(observation, EXPECTED, SPEC, code="")
    assert names_and_outcomes(checks) == [("element_spec", False)]
    assert checks[0].message == "labels are int32"
