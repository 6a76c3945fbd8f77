"""Timings that do not depend on the neighbours: one timing phase per host, pinned CPUs, re-timed
disturbed rounds, and speedups and points that noise below the tolerance cannot move."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.support.grading import GRADER_DATA_DIR, SIMULATOR, grader_config_for_tests, reference, requires_sandbox
from tests.support.paths import REPO_ROOT
from tests.support.processes import wait_until
from worker.grader import Grader
from worker.host import TimingLock, cpu_list_format, cpu_list_parse, timing_cpus_resolve
from worker.timing import CpuTimes, cpu_times, round_speedups, rounds_agree, rounds_to_use, run_load, speed_points

TARGETS = {"no_credit_at_or_below": 1.0, "full_credit_at": 3.0, "expert_fraction": 0.8}

# ----------------------------------------------------------------------------- pure parts


def test_cpu_lists_read_and_write_as_linux_writes_them():
    assert cpu_list_parse("0-3,8,10-11") == {0, 1, 2, 3, 8, 10, 11}
    assert cpu_list_format({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11"
    for bad in ("1-", "a", "3-1", "1,,x"):
        with pytest.raises(ValueError):
            cpu_list_parse(bad)


def test_timing_cpus_are_all_but_the_first_on_four_or_more_and_none_on_small_machines():
    assert timing_cpus_resolve("auto", range(8)) == set(range(1, 8))
    assert timing_cpus_resolve("auto", {4, 5, 6, 7}) == {5, 6, 7}
    assert timing_cpus_resolve("auto", {0, 1}) == frozenset()
    assert timing_cpus_resolve("none", range(8)) == frozenset()
    assert timing_cpus_resolve("2-3", range(8)) == {2, 3}
    with pytest.raises(ValueError, match="0-1"):
        timing_cpus_resolve("2-3", {0, 1})


def test_the_load_counts_the_other_work_on_the_cpus_and_not_the_timed_run():
    stat = "cpu  1 1 1 1 1 1 1 1 0 0\ncpu0 100 0 50 850 0 0 0 0 0 0\ncpu1 300 0 0 700 0 0 0 0 0 0\nintr 5\n"
    later = "cpu  1 1 1 1 1 1 1 1 0 0\ncpu0 150 0 50 900 0 0 0 0 0 0\ncpu1 400 0 0 700 0 0 0 0 0 0\nintr 9\n"
    assert cpu_times(stat, [1]) == CpuTimes(busy=3.0, total=10.0)
    assert cpu_times(stat, []) == CpuTimes(busy=4.5, total=20.0)
    # Over 1 s on both CPUs: 1.5 CPU-seconds busy, of which the timed run used 1.0.
    load = run_load(cpu_times(stat, []), cpu_times(later, []), own_cpu_seconds=1.0, wall_seconds=1.0, cpus=2)
    assert load.busy_fraction == pytest.approx(0.25)
    assert load.as_dict()["cpu_per_wall"] == 1.0
    # On CPU 1 alone the run's 1.0 CPU-second is all there was: nothing else ran there.
    assert run_load(cpu_times(stat, [1]), cpu_times(later, [1]), 1.0, 1.0, 1).busy_fraction == 0


def test_speedups_are_medians_of_each_rounds_own_ratios():
    steady = {"naive": 2.0, "expert": 1.0, "submission": 1.0}
    # The machine slowed by half in round 2 (all three runs), and a burst hit one run in round 3.
    drifted = {name: seconds * 1.5 for name, seconds in steady.items()}
    burst = {**steady, "submission": 1.6}
    speedups = round_speedups([steady, drifted, burst])
    assert speedups["vs_naive"] == pytest.approx(2.0)
    assert speedups["vs_expert"] == pytest.approx(1.0)
    assert speedups["expert_vs_naive"] == pytest.approx(2.0)
    assert speedups["spread"] == pytest.approx((2.0 - 1.25) / 2.0)


def test_rounds_agree_when_both_speedups_lie_within_the_agreement():
    steady = {"naive": 2.0, "expert": 1.0, "submission": 1.0}
    close = {"naive": 2.02, "expert": 1.005, "submission": 1.0}
    expert_moved = {"naive": 2.0, "expert": 1.05, "submission": 1.0}
    assert rounds_agree([steady, close], 0.02)
    assert not rounds_agree([steady, close], 0.005)
    # The naive ratio agrees, the expert one moved 5 %: a third round is timed.
    assert not rounds_agree([steady, expert_moved], 0.02)
    assert not rounds_agree([steady], 0.5) and not rounds_agree([steady, close], 0.0)


def test_the_first_calm_rounds_are_used_or_else_every_round_timed():
    assert rounds_to_use([0.01, 0.5, 0.02, 0.03, 0.01], limit=0.15, rounds=3) == [0, 2, 3]
    assert rounds_to_use([0.4, 0.9, 0.3, 0.02], limit=0.15, rounds=3) == [0, 1, 2, 3]


def test_noise_within_the_tolerance_does_not_move_the_references_points():
    def points(vs_naive: float, vs_expert: float, expert: float = 2.0) -> float:
        return speed_points(vs_naive, expert, TARGETS, 40, vs_expert=vs_expert, tolerance=0.05)

    # A copy of the expert measured 4% slow still gets full points; of the naive, 4% fast none.
    assert points(1.92, 0.96) == 40
    assert points(1.04, 0.52) == 0
    # Between them points still grow with the speedup.
    assert 0 < points(1.3, 0.65) < points(1.4, 0.7) < 40
    # On a small machine the expert reached only 1.3x: the full-credit threshold (1.04x) lies in
    # the naive's noise, so the score steps once, clear of it, instead of sliding within it.
    assert points(1.04, 0.8, expert=1.3) == 0
    assert points(1.12, 0.86, expert=1.3) == 40
    # Without a tolerance the rule is the linear one the course describes.
    assert speed_points(1.3, 2.0, TARGETS, 40) == pytest.approx(20)


def test_the_timing_lock_is_one_per_host_and_waits_a_bounded_time(tmp_path: Path):
    first, second = TimingLock(tmp_path / "timing.lock"), TimingLock(tmp_path / "timing.lock")
    waits: list[bool] = []
    assert first.acquire(timeout=1)
    try:
        assert not second.acquire(timeout=0.3, on_wait=lambda: waits.append(True))
        assert waits == [True]
    finally:
        first.release()
    assert second.acquire(timeout=1)
    second.release()


# ----------------------------------------------------------------------------- real gradings

# A grader in a process of its own: warms its sandbox, says so, waits for the start, grades.
GRADE_WHEN_TOLD = """
import dataclasses, json, sys, time
from pathlib import Path
from worker.grader import Grader, GraderConfig, course_file_exercises

lock, ready, start, data_dir = (Path(argument) for argument in sys.argv[1:5])
exercise = course_file_exercises(Path("decks/tensorflow-ai-phd.yaml"))["generator-simulator-source"]
grader = Grader(GraderConfig(
    data_dir=data_dir, timing_rounds=1, timing_retries=0, timing_cpus="none", timing_lock_path=lock,
    run_seconds=20.0,
))
try:
    grader.prepare(exercise)
    grader.warm_up()
    grader.wait_until_warm(90)
    # One grading only: no sandbox for a next one, whose import would only slow the test down.
    grader.config = dataclasses.replace(grader.config, warm_processes=0)
    ready.touch()
    deadline = time.monotonic() + 90
    while not start.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    result = grader.grade(exercise, exercise.spec["references"]["expert"])
finally:
    grader.close()
host = dict(result["timing"]["host"]) if result["timing"] else {}
host.pop("rounds", None)
print(json.dumps({"verdict": result["verdict"], "window": grader.last_stats.timing_window, "host": host}))
"""


def _holds_open(pid: int, path: Path) -> bool:
    """Whether process `pid` has `path` open: a grader opens the lock file when it asks for the lock."""
    try:
        return any(Path(f"/proc/{pid}/fd/{fd}").resolve() == path for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


def grade_in_two_processes(tmp_path: Path) -> list[dict[str, Any]]:
    """Both graders graded at once, with the lock held here until both ask for it: they must contend."""
    start = tmp_path / "start"
    lock_path = tmp_path / "timing.lock"
    processes = []
    held = TimingLock(lock_path)
    try:
        for number in range(2):
            arguments = [lock_path, tmp_path / f"ready-{number}", start, GRADER_DATA_DIR]
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-c", GRADE_WHEN_TOLD, *map(str, arguments)],
                    cwd=REPO_ROOT,
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )
        wait_until(
            lambda: all((tmp_path / f"ready-{number}").exists() for number in range(2)),
            timeout=120,
            what="both graders warm",
        )
        assert held.acquire(timeout=1)
        start.touch()
        wait_until(
            lambda: all(_holds_open(process.pid, lock_path.resolve()) for process in processes),
            timeout=120,
            what="both graders asking for the timing lock",
        )
        held.release()
        reports = [json.loads(process.communicate(timeout=120)[0]) for process in processes]
    finally:
        held.release()
        for process in processes:
            process.kill()
            process.wait(timeout=10)
    return reports


@requires_sandbox
@pytest.mark.grader
def test_two_graders_in_two_processes_never_time_at_the_same_time(tmp_path: Path):
    reports = grade_in_two_processes(tmp_path)
    assert [report["verdict"] for report in reports] == ["accepted", "accepted"], reports
    first, second = sorted(reports, key=lambda report: report["window"][1])
    # window: (asked for the lock, got it, let it go), on the host's monotonic clock.
    assert first["window"][2] <= second["window"][1], reports
    # They did contend: the second asked before the first was done timing, and waited for it.
    assert second["window"][0] < first["window"][2], reports
    assert first["host"]["lock_wait_seconds"] > 0 and second["host"]["lock_wait_seconds"] > 0
    assert first["host"]["exclusive"] and second["host"]["exclusive"]


@pytest.fixture(scope="module")
def graded_on_a_loaded_cpu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The simulator's expert solution graded with timed runs on CPU 1, where a busy loop spins."""
    if 1 not in os.sched_getaffinity(0):
        pytest.skip("needs CPU 1")
    config = grader_config_for_tests(
        warm_processes=1,
        timing_rounds=1,
        timing_retries=1,
        # One epoch per run, the first: what is measured does not matter here, only the load.
        warmup_epochs=0,
        timing_cpus="1",
        max_busy_fraction=0.15,
        run_seconds=30.0,
        timing_lock_path=tmp_path_factory.mktemp("lock") / "timing.lock",
    )
    grader = Grader(config)
    grader.prepare(SIMULATOR)
    grader.warm_up()
    # Started once the sandbox has imported TensorFlow, which it would otherwise slow down.
    assert grader.wait_until_warm(90)
    grader.config = replace(grader.config, warm_processes=0)  # one grading: no next sandbox
    busy_loop = subprocess.Popen(
        [sys.executable, "-c", "import os\nos.sched_setaffinity(0, {1})\nwhile True:\n    pass"]
    )
    try:
        yield grader.grade(SIMULATOR, reference(SIMULATOR, "expert"))
    finally:
        busy_loop.kill()
        busy_loop.wait(timeout=10)
        grader.close()


@requires_sandbox
@pytest.mark.grader
def test_a_round_on_a_busy_cpu_is_timed_again_and_its_load_recorded(graded_on_a_loaded_cpu: dict[str, Any]):
    result = graded_on_a_loaded_cpu
    assert result["verdict"] == "accepted", result
    host = result["timing"]["host"]
    # Both rounds shared CPU 1 with the busy loop: the first was timed again, once (the limit),
    # and with no calm round, both count.
    assert host["rounds_timed"] == 2 and host["retimed"] == 1
    assert all(record["disturbed"] and record["used"] for record in host["rounds"])
    assert host["disturbed"] is True
    assert host["busy_fraction"] > host["max_busy_fraction"] == 0.15
    for record in host["rounds"]:
        for load in record["load"].values():
            assert load["busy_fraction"] > 0.15
            assert load["wall_seconds"] > 0 and load["cpu_seconds"] > 0
    assert len(host["loadavg"]) == 3
    assert result["speedup"]["rounds"] == 2


@requires_sandbox
@pytest.mark.grader
def test_timed_runs_are_pinned_to_the_configured_cpus(graded_on_a_loaded_cpu: dict[str, Any]):
    host = graded_on_a_loaded_cpu["timing"]["host"]
    assert host["timing_cpus"] == [1] and host["cpus"] == 1
    # What the timed processes' threads were allowed, read from /proc as each run ended.
    assert {tuple(load["cpus"]) for record in host["rounds"] for load in record["load"].values()} == {(1,)}
