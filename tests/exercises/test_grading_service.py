"""Grading a stored submission: exactly once, never overwriting a result, taking over from a
worker that died, and giving up with a reason after repeated interruptions."""

from __future__ import annotations

import socket
import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.common.jobs import jobs_recover
from apps.content.models import PipelineExercise
from apps.exercises.jobs import GRADINGS
from apps.exercises.models import Submission, SubmissionStatus
from apps.exercises.services import submission_grade
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
        status=SubmissionStatus.CHECKING, attempts=1, worker="another-host:123", updated_at=timezone.now()
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
        updated_at=timezone.now(),
    )
    assert submission_grade(submission_id=submission.pk, grader=checking_grader, worker="test:1") == "graded"
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.DONE and submission.attempts == 2 and submission.verdict == "accepted"


def test_after_its_last_attempt_a_stalled_grading_fails_with_a_reason(submission: Submission, checking_grader):
    stale = timezone.now() - timedelta(minutes=5)
    last = GRADINGS.max_attempts
    Submission.objects.filter(pk=submission.pk).update(
        status=SubmissionStatus.CHECKING, attempts=last, worker="another-host:1", updated_at=stale
    )
    assert submission_grade(submission_id=submission.pk, grader=checking_grader, worker="test:1") == "failed"
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.FAILED and submission.attempts == last
    assert f"interrupted {last} times" in submission.error_message
    assert submission.code == reference(SIMULATOR, "expert")


def test_the_resume_round_hands_over_stalled_gradings_and_fails_exhausted_ones(submission: Submission, learner):
    stale = timezone.now() - timedelta(minutes=5)
    exhausted = Submission.objects.create(learner=learner, exercise=submission.exercise, code="x = 1\n")
    fresh = Submission.objects.create(learner=learner, exercise=submission.exercise, code="y = 1\n")
    Submission.objects.filter(pk=submission.pk).update(
        status=SubmissionStatus.RUNNING, attempts=1, worker="another-host:1", updated_at=stale
    )
    Submission.objects.filter(pk=exhausted.pk).update(
        status=SubmissionStatus.TIMING, attempts=GRADINGS.max_attempts, worker="another-host:1", updated_at=stale
    )
    Submission.objects.filter(pk=fresh.pk).update(
        status=SubmissionStatus.TIMING, attempts=1, worker="another-host:1", updated_at=timezone.now()
    )
    recovered = jobs_recover(GRADINGS, now=timezone.now())
    assert (recovered.handed_over, recovered.failed) == (1, 1)
    rows = {row.pk: row for row in Submission.objects.all()}
    # The stalled one keeps its status until a worker takes it over; it was handed over once.
    assert {pk: row.status for pk, row in rows.items()} == {
        submission.pk: SubmissionStatus.RUNNING,
        exhausted.pk: SubmissionStatus.FAILED,
        fresh.pk: SubmissionStatus.TIMING,
    }
    assert rows[submission.pk].enqueued_at is not None and rows[submission.pk].publish_attempts == 1
    assert "Submit the code again" in rows[exhausted.pk].error_message


def test_a_grader_failure_fails_the_submission_with_the_reason(submission: Submission, checking_grader: Grader):
    exercise = submission.exercise
    exercise.spec = {**exercise.spec, "data": {**exercise.spec["data"], "generator": "no_such_generator"}}
    exercise.save(update_fields=["spec"])
    assert submission_grade(submission_id=submission.pk, grader=checking_grader, worker="test:1") == "failed"
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.FAILED
    assert "The grader failed" in submission.error_message and "no_such_generator" in submission.error_message
    assert submission.verdict == "" and submission.result is None
