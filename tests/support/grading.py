"""Grading as the tests do: the shipped exercises, their references, and a real grader's settings."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import DECKS_DIR, REPO_ROOT
from worker.grader import ExerciseJob, Grader, GraderConfig, course_file_exercises
from worker.sandbox import Limits

# Shared with `make run` on purpose: the data are deterministic and slow to make the first time. A run
# as another user (.ci/run runs the sandbox's tests again as an ordinary user) names its own.
GRADER_DATA_DIR = Path(os.environ.get("GRADER_DATA_DIR") or REPO_ROOT / "var" / "grader-data")


EXERCISES = course_file_exercises(DECKS_DIR / "tensorflow-ai-phd.yaml")
SIMULATOR = EXERCISES["generator-simulator-source"]
IMAGES = EXERCISES["tfrecord-image-pipeline"]
SHARDS = EXERCISES["many-file-interleave"]
CACHE = EXERCISES["cache-then-augment"]
RECORDS = EXERCISES["records-that-do-not-parse"]
SPLITS = EXERCISES["normalize-without-leakage"]
EPOCHS = EXERCISES["reproducible-epochs"]
SHARDED = EXERCISES["sharded-input"]


def reference(exercise: ExerciseJob, which: str) -> str:
    code: str = exercise.spec["references"][which]
    return code


def sandbox_available() -> bool:
    return shutil.which("bwrap") is not None


SANDBOX_MISSING = "bubblewrap is not installed"
requires_sandbox = pytest.mark.skipif(not sandbox_available(), reason=SANDBOX_MISSING)


def grader_config_for_tests(**changes: Any) -> GraderConfig:
    settings: dict[str, Any] = {
        "data_dir": GRADER_DATA_DIR,
        "warm_processes": 2,
        "timing_rounds": 0,
        # What a grading reports is tested here, not how steady it is: a busy machine re-times nothing.
        "timing_retries": 0,
        # Each test's timing is its own: figures stored by another test would change what it times.
        "baselines": False,
        # A correct run on a machine busy with the rest of the suite must not become a timeout; the tests
        # of timeouts use graders of their own with short runs.
        "run_seconds": 30.0,
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


def assert_grades_next_submission(grader: Grader) -> None:
    """After whatever the last submission did, the grader still grades a correct one."""
    result = grader.grade(SIMULATOR, reference(SIMULATOR, "expert"))
    assert result["verdict"] == "accepted", result


def pipeline_after(prelude: str) -> str:
    """Code that runs `prelude` inside build_pipeline, then returns a correct pipeline."""
    body = "\n".join("    " + line for line in prelude.strip().splitlines())
    return f"""
import tensorflow as tf


def build_pipeline(make_source):
{body}
    signature = (tf.TensorSpec((8,), tf.float32), tf.TensorSpec((), tf.int32))
    samples = tf.data.Dataset.from_generator(make_source, output_signature=signature)
    return samples.batch(16, drop_remainder=True).prefetch(2)
"""


# What every grading result holds, however it ended.
# Of a result whose checking run traced its first epoch (a rejected or crashed one has no profile).
RESULT_KEYS = {"verdict", "message", "checks", "timing", "speedup", "score", "lint", "device", "output", "profile"}
