"""The per-stage profile from tf.data's trace names, the input-bound verdict and the advice (pure)."""

from __future__ import annotations

import pytest

from worker.stage_profile import input_bound, profile_advice, profile_result, stage_profile

PS = 10**12  # picoseconds per second, the trace's unit


def test_each_stage_gets_its_own_time_and_the_slowest_is_named():
    # Per call: the batch waits 1.0 s in all, of which its map took 0.9 s, of which reading took 0.1 s;
    # the files of an interleave ([0], [1]) count as one stage.
    events = [
        ("Iterator::Root", 1 * PS),
        ("Iterator::Root::BatchV2", 1 * PS),
        ("Iterator::Root::BatchV2::Map", 9 * PS // 10),
        ("Iterator::Root::BatchV2::Map::Interleave[0]::TFRecord", PS // 20),
        ("Iterator::Root::BatchV2::Map::Interleave[1]::TFRecord", PS // 20),
        ("Iterator::Root::BatchV2::Map::Interleave", PS // 10),
    ]
    profile = stage_profile(events, batches=10)
    assert profile is not None
    stages = {stage["path"]: stage for stage in profile["stages"]}
    assert list(stages) == ["BatchV2::Map::Interleave::TFRecord", "BatchV2::Map::Interleave", "BatchV2::Map", "BatchV2"]
    assert stages["BatchV2::Map"]["seconds_per_batch"] == pytest.approx(0.08)
    assert stages["BatchV2"]["seconds_per_batch"] == pytest.approx(0.01)
    assert stages["BatchV2::Map::Interleave::TFRecord"]["kind"] == "read"
    assert stages["BatchV2::Map::Interleave"]["seconds_per_batch"] == 0.0
    assert sum(stage["share"] for stage in profile["stages"]) == pytest.approx(1.0, abs=0.001)
    assert profile["slowest"] == "BatchV2::Map"


def test_a_stage_that_runs_ahead_hides_its_input_and_gets_no_time_of_its_own():
    events = [("Iterator::Root::Prefetch", PS // 10), ("Iterator::Root::Prefetch::ParallelMapV2", PS)]
    profile = stage_profile(events, batches=4)
    assert profile is not None
    prefetch, mapped = profile["stages"][1], profile["stages"][0]
    assert (prefetch["kind"], prefetch["parallel"], prefetch["seconds_per_batch"]) == ("prefetch", True, 0.0)
    assert (mapped["kind"], mapped["parallel"], mapped["seconds_per_batch"]) == ("map", True, 0.25)


def test_no_trace_gives_no_profile():
    assert stage_profile([], batches=3) is None
    assert stage_profile([("Iterator::Root::BatchV2", PS)], batches=0) is None


@pytest.mark.parametrize(
    ("waiting", "verdict"), [(0.0, "not"), (0.049, "not"), (0.05, "moderately"), (0.199, "moderately"), (0.2, "highly")]
)
def test_the_input_bound_verdict_uses_the_profilers_thresholds(waiting: float, verdict: str):
    assert input_bound(waiting)["verdict"] == verdict


def test_the_advice_names_the_slowest_stage_and_what_to_do():
    profile = stage_profile([("Iterator::Root::BatchV2", PS), ("Iterator::Root::BatchV2::Map", 9 * PS // 10)], 10)
    assert profile is not None
    waiting = profile_advice(profile["stages"], profile["slowest"], input_bound(0.4))
    assert waiting.startswith("The slowest stage is Map (map, 90% of the pipeline's own time). Run the map")
    assert "num_parallel_calls=tf.data.AUTOTUNE" in waiting
    calm = profile_advice(profile["stages"], profile["slowest"], input_bound(0.01))
    assert calm.endswith("and it keeps up: the training step hardly waits for it.")


def test_a_malformed_profile_from_the_checking_run_is_dropped():
    good = stage_profile([("Iterator::Root::BatchV2", PS)], 2)
    assert profile_result(good, None) is not None
    assert profile_result(None, None) is None
    assert profile_result({"stages": "no", "slowest": "x", "batches": 1}, None) is None
    assert profile_result({**(good or {}), "slowest": "not a stage"}, None) is None
