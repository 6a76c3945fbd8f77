"""Grading a stored submission: exactly once, never overwriting a result, taking over from a
worker that died, and giving up with a reason after repeated interruptions."""

from __future__ import annotations

import socket
import subprocess
import sys
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from apps.content.models import PipelineExercise
from apps.exercises.models import Submission, SubmissionStatus
from apps.exercises.services import submission_grade, submissions_reap_stalled
from tests.support.grading import SIMULATOR, reference, requires_sandbox
from worker.grader import Grader

pytestmark = [pytest.mark.django_db, pytest.mark.grader]


@pytest.fixture
def submission(learner, shipped_course) -> Submission:
    exercise = PipelineExercise.objects.get(slug=SIMULATOR.slug)
    return Submission.objects.create(learner=learner, exercise=exercise, code=reference(SIMULATOR, "expert"))


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


@requires_sandbox
def test_grading_stores_the_result_once_and_a_second_delivery_changes_nothing(
    submission: Submission, checking_grader: Grader
):
    assert submission_grade(submission_id=submission.pk, grader=checking_grader, worker="test:1") == "graded"
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.DONE and submission.verdict == "accepted", submission.result
    assert submission.attempts == 1 and submission.progress == 1.0 and submission.finished_at is not None
    assert submission.result is not None
    assert submission.score == submission.result["score"]["total"] == 60.0
    finished_at = submission.finished_at

    assert submission_grade(submission_id=submission.pk, grader=checking_grader, worker="test:2") == "finished"
    submission.refresh_from_db()
    assert submission.attempts == 1 and submission.finished_at == finished_at


def test_a_grading_in_progress_elsewhere_is_left_alone(submission: Submission, checking_grader: Grader):
    Submission.objects.filter(pk=submission.pk).update(
        status=SubmissionStatus.CHECKING, attempts=1, worker="another-host:123", heartbeat_at=timezone.now()
    )
    assert submission_grade(submission_id=submission.pk, grader=checking_grader, worker="test:1") == "busy"
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.CHECKING and submission.attempts == 1


@requires_sandbox
def test_a_grading_whose_worker_process_died_is_taken_over(submission: Submission, checking_grader: Grader):
    Submission.objects.filter(pk=submission.pk).update(
        status=SubmissionStatus.TIMING,
        attempts=1,
        worker=f"{socket.gethostname()}:{dead_pid()}",
        heartbeat_at=timezone.now(),
    )
    assert submission_grade(submission_id=submission.pk, grader=checking_grader, worker="test:1") == "graded"
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.DONE and submission.attempts == 2 and submission.verdict == "accepted"


@override_settings(SUBMISSION_MAX_ATTEMPTS=2)
def test_after_its_last_attempt_a_stalled_grading_fails_with_a_reason(submission: Submission, checking_grader):
    stale = timezone.now() - timedelta(minutes=5)
    Submission.objects.filter(pk=submission.pk).update(
        status=SubmissionStatus.CHECKING, attempts=2, worker="another-host:1", heartbeat_at=stale
    )
    assert submission_grade(submission_id=submission.pk, grader=checking_grader, worker="test:1") == "failed"
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.FAILED
    assert "interrupted 2 times" in submission.error
    assert submission.code == reference(SIMULATOR, "expert")


def test_the_reaper_requeues_stalled_gradings_and_fails_exhausted_ones(
    submission: Submission, learner, django_capture_on_commit_callbacks
):
    stale = timezone.now() - timedelta(minutes=5)
    exhausted = Submission.objects.create(learner=learner, exercise=submission.exercise, code="x = 1\n")
    fresh = Submission.objects.create(learner=learner, exercise=submission.exercise, code="y = 1\n")
    Submission.objects.filter(pk=submission.pk).update(
        status=SubmissionStatus.RUNNING, attempts=1, worker="another-host:1", heartbeat_at=stale
    )
    Submission.objects.filter(pk=exhausted.pk).update(
        status=SubmissionStatus.TIMING, attempts=2, worker="another-host:1", heartbeat_at=stale
    )
    Submission.objects.filter(pk=fresh.pk).update(
        status=SubmissionStatus.TIMING, attempts=1, worker="another-host:1", heartbeat_at=timezone.now()
    )
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert submissions_reap_stalled() == {"requeued": 1, "failed": 1}
    assert len(callbacks) == 1
    statuses = dict(Submission.objects.values_list("pk", "status"))
    assert statuses == {
        submission.pk: SubmissionStatus.QUEUED,
        exhausted.pk: SubmissionStatus.FAILED,
        fresh.pk: SubmissionStatus.TIMING,
    }


def test_a_grader_failure_fails_the_submission_with_the_reason(submission: Submission, checking_grader: Grader):
    exercise = submission.exercise
    exercise.spec = {**exercise.spec, "data": {**exercise.spec["data"], "generator": "no_such_generator"}}
    exercise.save(update_fields=["spec"])
    assert submission_grade(submission_id=submission.pk, grader=checking_grader, worker="test:1") == "failed"
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.FAILED
    assert "The grader failed" in submission.error and "no_such_generator" in submission.error
    assert submission.verdict == "" and submission.result is None
