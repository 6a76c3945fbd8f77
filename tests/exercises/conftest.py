"""A real grader (bubblewrap sandboxes with TensorFlow) and the shipped exercises, for the grading tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from tests.conftest import DECKS_DIR, REPO_ROOT
from worker.grader import ExerciseJob, Grader, GraderConfig, course_file_exercises
from worker.sandbox import Limits

# Shared with `make run` on purpose: the data are deterministic and slow to make the first time.
GRADER_DATA_DIR = REPO_ROOT / "var" / "grader-data"


EXERCISES = course_file_exercises(DECKS_DIR / "tensorflow-ai-phd.yaml")
SIMULATOR = EXERCISES["generator-simulator-source"]
IMAGES = EXERCISES["tfrecord-image-pipeline"]
SHARDS = EXERCISES["many-file-interleave"]
CACHE = EXERCISES["cache-then-augment"]


def reference(exercise: ExerciseJob, which: str) -> str:
    code: str = exercise.spec["references"][which]
    return code


def sandbox_available() -> bool:
    return shutil.which("bwrap") is not None


requires_sandbox = pytest.mark.skipif(not sandbox_available(), reason="bubblewrap is not installed")


def grader_config_for_tests(**changes: Any) -> GraderConfig:
    settings: dict[str, Any] = {
        "data_dir": GRADER_DATA_DIR,
        "warm_processes": 2,
        "timing_rounds": 0,
        # What a grading reports is tested here, not how steady it is: a busy machine re-times nothing.
        "timing_retries": 0,
        "run_seconds": 12.0,
        "limits": Limits(
            wall_seconds=120.0,
            cpu_seconds=240,
            memory_bytes=3 * 1024**3,
            processes=1024,
            open_files=1024,
            scratch_bytes=256 * 1024**2,
            result_bytes=32 * 1024**2,
        ),
    }
    settings.update(changes)
    return GraderConfig(**settings)


@pytest.fixture(scope="session")
def checking_grader() -> Iterator[Grader]:
    """Checks only (no timing), with two warm sandboxes: what most grading tests need."""
    grader = Grader(grader_config_for_tests())
    grader.warm_up()
    yield grader
    grader.close()


@pytest.fixture(scope="session")
def hostile_grader() -> Iterator[Grader]:
    """For attacks on the quick simulator exercise: short runs, fewer processes, one warm sandbox."""
    limits = replace(grader_config_for_tests().limits, processes=256)
    grader = Grader(grader_config_for_tests(run_seconds=6.0, warm_processes=1, limits=limits))
    grader.warm_up()
    yield grader
    grader.close()


def assert_grades_next_submission(grader: Grader) -> None:
    """After whatever the last submission did, the grader still grades a correct one."""
    result = grader.grade(SIMULATOR, reference(SIMULATOR, "expert"))
    assert result["verdict"] == "accepted", result
