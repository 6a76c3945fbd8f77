"""Real graders (bubblewrap sandboxes with TensorFlow), warmed once per test process."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from tests.support.grading import grader_config_for_tests
from worker.grader import Grader


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
