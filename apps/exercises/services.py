"""Submitting code and grading it exactly once (recovering gradings a dead worker left behind is the
resume round of apps.common.jobs)."""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.common.errors import DomainError, IdempotencyKeyReused, RequestTooLarge, RetryLater
from apps.common.jobs import Claim, job_finish, job_heartbeat, job_locked, job_publish_after_commit, job_take
from apps.common.periodic import PeriodicThread
from apps.content.selectors import exercise_get
from apps.exercises.jobs import GRADINGS
from apps.exercises.models import IN_PROGRESS, Submission, SubmissionStatus
from worker.limits import MAX_CODE_BYTES

if TYPE_CHECKING:
    from worker.grader import Grader, Progress

logger = logging.getLogger(__name__)

# Where each phase's own progress (0-1) lands in the submission's overall progress.
PHASE_SPANS = {"checking": (0.05, 0.3), "timing": (0.3, 0.98)}
# A grading marks itself alive this many times within the stale limit, so a few late marks on a
# loaded machine never make a live grading look dead.
HEARTBEATS_PER_STALE_LIMIT = 6


class CodeTooLarge(RequestTooLarge):
    code = "code_too_large"


class TooManySubmissions(RetryLater):
    pass


def submission_create(
    *, learner: Any, exercise_slug: str, code: str, client_submission_id: uuid.UUID | None = None
) -> tuple[Submission, bool]:
    """Store the code and queue its grading; returns the submission and whether it is new.

    Refuses oversized code and too many submissions. A client_submission_id already recorded with
    the same exercise and code returns that submission as it is now: nothing is stored, graded or
    counted against the limit, and it is found before the exercise is looked up, so a retry still
    succeeds after the exercise was archived. Sent with another exercise or code, it is refused
    (IdempotencyKeyReused).
    """
    seen = _submission_by_client_id(learner=learner, client_submission_id=client_submission_id)
    if seen is not None:
        return _same_submission_or_refused(seen, exercise_slug=exercise_slug, code=code), False
    exercise = exercise_get(slug=exercise_slug)
    size = len(code.encode())
    if size > MAX_CODE_BYTES:
        raise CodeTooLarge(
            f"The code is {size} bytes; at most {MAX_CODE_BYTES} bytes ({MAX_CODE_BYTES // 1024} KiB) are accepted.",
            fields={"code": [f"At most {MAX_CODE_BYTES} bytes."]},
        )
    if not code.strip():
        raise DomainError("The code is empty.", fields={"code": ["Send the code of your pipeline."]})
    limit = settings.SUBMISSIONS_PER_MINUTE
    try:
        with transaction.atomic():
            # One learner's submissions are counted one at a time, so two at once cannot both slip under.
            get_user_model().objects.select_for_update().filter(pk=learner.pk).first()
            # Looked up again under the lock: a retry racing its first request waits for it, then finds it.
            seen = _submission_by_client_id(learner=learner, client_submission_id=client_submission_id)
            if seen is not None:
                return _same_submission_or_refused(seen, exercise_slug=exercise_slug, code=code), False
            window_start = timezone.now() - timedelta(minutes=1)
            recent = list(
                Submission.objects.filter(learner_id=learner.pk, created_at__gte=window_start)
                .order_by("created_at")
                .values_list("created_at", flat=True)
            )
            if len(recent) >= limit:
                wait = max(1, int((recent[0] + timedelta(minutes=1) - timezone.now()).total_seconds()) + 1)
                raise TooManySubmissions(
                    f"At most {limit} submissions a minute; try again in {wait} s.", retry_after=wait
                )
            submission = Submission.objects.create(
                learner=learner, exercise=exercise, code=code, client_submission_id=client_submission_id
            )
            job_publish_after_commit(GRADINGS, submission)
    except IntegrityError:
        # The unique (learner, client_submission_id) constraint, should the lock ever be bypassed.
        seen = _submission_by_client_id(learner=learner, client_submission_id=client_submission_id)
        if seen is None:
            raise
        return _same_submission_or_refused(seen, exercise_slug=exercise_slug, code=code), False
    return submission, True


def _submission_by_client_id(*, learner: Any, client_submission_id: uuid.UUID | None) -> Submission | None:
    if client_submission_id is None:
        return None
    return (
        Submission.objects.select_related("exercise")
        .filter(learner_id=learner.pk, client_submission_id=client_submission_id)
        .first()
    )


def _same_submission_or_refused(submission: Submission, *, exercise_slug: str, code: str) -> Submission:
    differs = [
        name
        for name, same in (("exercise", submission.exercise.slug == exercise_slug), ("code", submission.code == code))
        if not same
    ]
    if differs:
        raise IdempotencyKeyReused(
            f"client_submission_id {submission.client_submission_id} was already used for submission "
            f"{submission.pk} with another {' and '.join(differs)}; nothing was recorded. Send a new id "
            "for new code.",
            fields={
                name: ["Differs from the submission first sent with this client_submission_id."] for name in differs
            },
        )
    return submission


def submission_grade(*, submission_id: int, grader: Grader | None = None, worker: str | None = None) -> str:
    """Grade one submission unless it is finished or someone is grading it; says what it did.

    Safe to call again for the same submission (a redelivered or re-sent task): a finished result is
    never graded again or overwritten, and a grading in progress elsewhere is left alone ("busy")
    unless its worker has stopped (its process is gone, or its heartbeat is stale). A busy one needs
    nothing more from the caller: if its worker stops, the resume round hands it over again."""
    now = timezone.now()
    with job_locked(GRADINGS, submission_id, related=("exercise",)) as submission:
        if submission is not None:
            submission.progress = 0.0
            submission.progress_detail = None
        claim = job_take(GRADINGS, submission, now=now, worker=worker, fields=("progress", "progress_detail"))
    if claim != Claim.CLAIMED:
        return str(claim)
    # Imported here: only a worker grades, and the grader brings NumPy, which the web process never needs.
    from apps.exercises.grading import exercise_job, grader_get
    from worker.grader import GradingFailed

    grader = grader or grader_get()

    def mark_alive() -> None:
        job_heartbeat(GRADINGS, submission)

    beat = PeriodicThread(
        mark_alive,
        interval=GRADINGS.stalled_after.total_seconds() / HEARTBEATS_PER_STALE_LIMIT,
        name=f"heartbeat-{submission_id}",
    )
    beat.start()
    try:
        result = grader.grade(
            exercise_job(submission.exercise),
            submission.code,
            lambda progress: _progress(submission, progress),
        )
    except GradingFailed as failure:
        _finish(submission, status=SubmissionStatus.FAILED, error=f"The grader failed: {failure}")
        return "failed"
    finally:
        beat.stop()
    submission.verdict = result["verdict"]
    submission.score = float(result["score"]["total"])
    submission.result = result
    _finish(submission, status=SubmissionStatus.DONE, fields=("verdict", "score", "result"))
    return "graded"


def submission_grading_overran(*, submission_id: int, worker: str) -> str:
    """Fail a grading stopped at its time limit, if this worker still owns it."""
    submission = Submission.objects.filter(pk=submission_id, worker=worker, status__in=IN_PROGRESS).first()
    if submission is not None:
        error = f"Grading took longer than {settings.GRADER_TASK_SOFT_SECONDS} s and was stopped."
        _finish(submission, status=SubmissionStatus.FAILED, error=error)
    return "failed"


def _progress(submission: Submission, progress: Progress) -> None:
    low, high = PHASE_SPANS.get(progress.phase, (0.0, 1.0))
    submission.status = SubmissionStatus.TIMING if progress.phase == "timing" else SubmissionStatus.CHECKING
    # Never backwards: a round timed again, or a late message, keeps the bar where it was.
    submission.progress = max(submission.progress, round(low + (high - low) * min(max(progress.value, 0.0), 1.0), 3))
    submission.progress_detail = progress.detail()
    job_heartbeat(GRADINGS, submission, fields=("status", "progress", "progress_detail"))


def _finish(submission: Submission, *, status: str, error: str = "", fields: tuple[str, ...] = ()) -> bool:
    """Write the outcome, only if this attempt still owns the submission."""
    submission.progress = 1.0
    submission.progress_detail = None
    return job_finish(
        GRADINGS,
        submission,
        status=status,
        now=timezone.now(),
        error=error,
        fields=("progress", "progress_detail", *fields),
    )
