"""The exercise on sharded input: the references pass for every worker of every setup; each way of
sharding wrong (not at all, after parsing, on files when there are fewer than workers, the global
batch, the same shuffle everywhere) fails with a message that names the setup and the worker."""

from __future__ import annotations

import pytest

from tests.support.grading import SHARDED, reference, requires_sandbox
from worker.grader import Grader

pytestmark = [requires_sandbox, pytest.mark.grader]

EXPERT = reference(SHARDED, "expert")
SHARDING_CHECKS = {
    "sharded_every_example_once",
    "per_replica_batches",
    "workers_shuffled",
    "sharded_before_reading",
    "sharded_before_parsing",
}


def variant(*changes: tuple[str, str]) -> str:
    code = EXPERT
    for old, new in changes:
        assert old in code
        code = code.replace(old, new)
    return code


def failed(result: dict) -> dict[str, str]:
    return {check["name"]: check["message"] for check in result["checks"] if not check["passed"] and check["ran"]}


def test_the_expert_reference_passes_for_every_worker_of_every_setup(checking_grader: Grader):
    result = checking_grader.grade(SHARDED, EXPERT)
    assert result["verdict"] == "accepted", result
    assert {check["name"] for check in result["checks"] if check["passed"]} >= SHARDING_CHECKS


def test_no_sharding_gives_every_example_to_every_worker(checking_grader: Grader):
    faults = failed(checking_grader.grade(SHARDED, variant((".shard(workers, worker)\n", "\n"))))
    assert faults["sharded_every_example_once"].startswith(
        "With 2 workers over 8 files, 8192 examples came from more than one worker (worker 0 and worker 1 both"
    )
    assert faults["sharded_before_reading"].startswith("With 2 workers over 8 files, worker 0 read")


def test_the_naive_reference_shards_after_parsing_and_is_told_what_every_worker_wasted(checking_grader: Grader):
    # The naive pipeline: every worker reads and parses every record, then keeps its share.
    faults = failed(checking_grader.grade(SHARDED, reference(SHARDED, "naive")))
    assert set(faults) == {"sharded_before_reading", "sharded_before_parsing"}
    assert faults["sharded_before_reading"].startswith("With 2 workers over 8 files, worker 0 read")
    assert faults["sharded_before_parsing"].startswith("With 2 workers over 8 files, worker 0 parsed 8192 records")
    assert "shard the records before parsing them" in faults["sharded_before_parsing"]


def test_file_sharding_with_fewer_files_than_workers_leaves_workers_without_batches(checking_grader: Grader):
    files_only = variant(("if len(files) >= workers:", "if True:"))
    faults = failed(checking_grader.grade(SHARDED, files_only))
    assert faults["per_replica_batches"].startswith(
        "With 4 workers over 2 files, worker 2 gave batches of none, expected 16 each"
    )


def test_the_global_batch_is_told_with_the_per_replica_size(checking_grader: Grader):
    result = checking_grader.grade(SHARDED, variant(("records.batch(batch_size,", "records.batch(GLOBAL_BATCH_SIZE,")))
    assert result["verdict"] == "wrong_output"
    assert failed(result)["element_spec"].startswith("batch 1: features have shape (64, 64), expected (32, 64)")


def test_the_same_shuffle_on_every_worker_is_named(checking_grader: Grader):
    seeded = variant(("records = records.shuffle(1024)", "records = records.shuffle(1024, seed=1)"))
    faults = failed(checking_grader.grade(SHARDED, seeded))
    assert set(faults) == {"workers_shuffled"}
    assert "neighbouring workers shuffle their shards the same way" in faults["workers_shuffled"]
