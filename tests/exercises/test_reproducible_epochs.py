"""The exercise on reproducible epochs and the learner's own coverage test: the references pass; a
pipeline that ignores or freezes its seed, or never reshuffles, is named; the learner's test is run
against the grader's correct and broken pipelines, and every pipeline it lets through is named."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.support.grading import EPOCHS, reference, requires_sandbox
from worker.coverage_cases import coverage_cases
from worker.grader import Grader

EXPERT = reference(EPOCHS, "expert")
CHECK = EXPERT[EXPERT.index("def check_epoch") :]


def variant(old: str, new: str) -> str:
    assert old in EXPERT
    return EXPERT.replace(old, new)


def with_check(body: str) -> str:
    return EXPERT.replace(CHECK, "def check_epoch(dataset, expected_ids):\n" + body)


def failed(result: dict) -> dict[str, str]:
    return {check["name"]: check["message"] for check in result["checks"] if not check["passed"] and check["ran"]}


def test_every_broken_pipeline_breaks_what_its_name_says_and_the_correct_one_nothing():
    cases = {case.name: case for case in coverage_cases(1000, 32, seed=99)}
    ids = Counter(range(1000))

    def holds_every_id_once(epoch) -> bool:
        return Counter(epoch.tolist()) == ids

    correct = cases.pop("correct")
    assert all(holds_every_id_once(epoch) for epoch in correct.epochs)
    assert correct.epochs[0].tolist() != correct.epochs[1].tolist()
    assert not correct.broken and all(case.broken for case in cases.values())
    assert len(cases["dropped remainder"].epochs[0]) == 992
    assert max(Counter(cases["overlapping shards"].epochs[0].tolist()).values()) == 2
    assert len(set(cases["take before repeat"].epochs[0].tolist())) == 960
    assert not any(holds_every_id_once(epoch) for epoch in cases["repeat before shuffle"].epochs)
    assert holds_every_id_once(cases["partial cache"].epochs[0]) and len(cases["partial cache"].epochs[1]) == 800
    frozen = cases["no reshuffle"].epochs
    assert all(holds_every_id_once(epoch) for epoch in frozen) and frozen[0].tolist() == frozen[1].tolist()
    # The same seed, the same cases: a learner's result does not change from one grading to the next.
    again = {case.name: case for case in coverage_cases(1000, 32, seed=99)}
    assert all(again[name].epochs[0].tolist() == case.epochs[0].tolist() for name, case in cases.items())


@requires_sandbox
@pytest.mark.grader
@pytest.mark.parametrize("which", ["naive", "expert"])
def test_the_references_are_reproducible_and_their_tests_tell_every_pipeline_apart(checking_grader: Grader, which: str):
    result = checking_grader.grade(EPOCHS, reference(EPOCHS, which))
    assert result["verdict"] == "accepted", result
    passed = {check["name"]: check["message"] for check in result["checks"] if check["passed"]}
    assert passed["reproducible_order"].startswith("Seed 1234 gives the same orders when built again")
    assert "failed every broken one" in passed["coverage_test"]


@requires_sandbox
@pytest.mark.grader
@pytest.mark.parametrize(
    ("changes", "check", "message"),
    [
        (
            [("seed=seed", "seed=None")],
            "reproducible_order",
            "Built twice with seed 1234, the pipeline gave two different orders in epoch 1",
        ),
        (
            [("seed=seed", "seed=7")],
            "reproducible_order",
            "Seeds 1234 and 4321 gave the same order: the shuffle must use the seed it is given.",
        ),
        (
            [
                ("reshuffle_each_iteration=True", "reshuffle_each_iteration=False"),
                ("shuffle(len(files), seed=seed)", "shuffle(len(files), seed=seed, reshuffle_each_iteration=False)"),
            ],
            "shuffled",
            "Epochs 1 and 2 have the same order",
        ),
    ],
    ids=["no seed", "a fixed seed", "no reshuffle"],
)
def test_a_pipeline_that_does_not_follow_its_seed_is_named(checking_grader: Grader, changes, check, message):
    code = EXPERT
    for old, new in changes:
        assert old in code
        code = code.replace(old, new)
    result = checking_grader.grade(EPOCHS, code)
    assert result["verdict"] == "wrong_output"
    assert set(failed(result)) == {check}
    assert failed(result)[check].startswith(message)


@requires_sandbox
@pytest.mark.grader
def test_a_test_that_only_counts_names_the_pipelines_it_lets_through(checking_grader: Grader):
    counting = with_check(
        "    for _ in (1, 2):\n"
        "        ids = [int(value) for _, batch in dataset for value in batch.numpy()]\n"
        "        assert len(ids) == len(expected_ids), f'{len(ids)} ids'\n"
    )
    result = checking_grader.grade(EPOCHS, counting)
    assert result["verdict"] == "wrong_output"
    assert set(failed(result)) == {"coverage_test"}
    message = failed(result)["coverage_test"]
    assert message.startswith("Your check_epoch told 5 of 7 pipelines apart: it passed repeat before shuffle (")
    assert "; it passed no reshuffle (shuffle(..., reshuffle_each_iteration=False)" in message
    # Scored by how many it tells apart: 5 of 7 of the correctness points, and no speed (not timed).
    coverage = next(check for check in result["checks"] if check["name"] == "coverage_test")
    assert coverage["credit"] == pytest.approx(5 / 7, abs=1e-4)
    assert result["score"]["correctness"] == pytest.approx(round(70 * 5 / 7, 1))
    assert result["score"]["total"] == result["score"]["correctness"] and result["score"]["speed"] == 0


@requires_sandbox
@pytest.mark.grader
def test_partial_credit_for_the_test_needs_everything_else_right(checking_grader: Grader):
    counting_and_unseeded = with_check(
        "    ids = [int(value) for _, batch in dataset for value in batch.numpy()]\n"
        "    assert len(ids) == len(expected_ids)\n"
    ).replace("seed=seed", "seed=None")
    result = checking_grader.grade(EPOCHS, counting_and_unseeded)
    assert {"coverage_test", "reproducible_order"} <= set(failed(result))
    assert result["score"]["correctness"] == 0


@requires_sandbox
@pytest.mark.grader
def test_a_test_that_fails_everything_or_is_missing_is_told_so(checking_grader: Grader):
    always = checking_grader.grade(EPOCHS, with_check("    raise AssertionError('nothing passes')\n"))
    assert failed(always)["coverage_test"] == (
        "Your check_epoch told 6 of 7 pipelines apart: it failed the correct pipeline, saying AssertionError:"
        " nothing passes."
    )
    assert always["score"]["correctness"] == pytest.approx(60.0)
    missing = checking_grader.grade(EPOCHS, EXPERT.replace(CHECK, ""))
    # No test at all earns nothing.
    assert missing["score"]["correctness"] == 0
    assert failed(missing)["coverage_test"] == (
        "define check_epoch(dataset, expected_ids): it is the second part of the exercise."
    )
