"""Submitting code, grading it exactly once, and recovering gradings a dead worker left behind."""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from apps.common.errors import DomainError, IdempotencyKeyReused, RequestTooLarge, RetryLater
from apps.common.periodic import PeriodicThread
from apps.common.publish import tasks_publish
from apps.content.selectors import exercise_get
from apps.exercises.conf import GRADE_SUBMISSION_TASK
from apps.exercises.models import FINISHED, IN_PROGRESS, Submission, SubmissionStatus
from worker.limits import MAX_CODE_BYTES

if TYPE_CHECKING:
    from worker.grader import Grader

logger = logging.getLogger(__name__)

# Where each phase's own progress (0-1) lands in the submission's overall progress.
PHASE_SPANS = {"checking": (0.05, 0.3), "timing": (0.3, 0.98)}
# A grading marks itself alive this many times within the stale limit, so a few late marks on a
# loaded machine never make a live grading look dead.
HEARTBEATS_PER_STALE_LIMIT = 6
# The PostgreSQL advisory lock one reaping round holds: "QUIZREAP" in ASCII, any number this
# database uses for nothing else.
REAP_LOCK_KEY = 0x5155495A52454150
# The most queued submissions one reaping round sends again; the next round takes the rest.
REPUBLISH_BATCH = 500


class CodeTooLarge(RequestTooLarge):
    code = "code_too_large"


class TooManySubmissions(RetryLater):
    pass


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


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
            _grade_after_commit(submission.pk)
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


def _grade_after_commit(submission_id: int) -> None:
    # Robust: the row is stored whatever happens after the commit, and the reaper sends what was not.
    transaction.on_commit(lambda: gradings_publish([submission_id]), robust=True)


def gradings_publish(submission_ids: list[int]) -> int:
    """Hand these gradings to the broker in order, recording each try; returns how many it took.

    A submission the broker did not take stays queued with `enqueued_at` empty, for the reaper. With the
    broker down this returns within GRADING_PUBLISH_TIMEOUT_SECONDS, having logged why."""
    if not submission_ids:
        return 0
    sent = tasks_publish(
        GRADE_SUBMISSION_TASK, submission_ids, timeout=settings.GRADING_PUBLISH_TIMEOUT_SECONDS, what="gradings"
    )
    if sent:
        Submission.objects.filter(pk__in=submission_ids[:sent]).update(
            enqueued_at=timezone.now(), publish_attempts=F("publish_attempts") + 1
        )
    if sent < len(submission_ids):
        # The broker refused this one (tasks_publish logged why); the ones after it were not tried.
        Submission.objects.filter(pk=submission_ids[sent]).update(publish_attempts=F("publish_attempts") + 1)
    return sent


def submission_grade(*, submission_id: int, grader: Grader | None = None, worker: str | None = None) -> str:
    """Grade one submission unless it is finished or someone is grading it; says what it did.

    Safe to call again for the same submission (a redelivered or re-sent task): a finished result is
    never graded again or overwritten, and a grading in progress elsewhere is left alone ("busy")
    unless its worker has stopped (its process is gone, or its heartbeat is stale). A busy one needs
    nothing more from the caller: if its worker stops, the reaper re-queues it."""
    worker = worker or worker_name()
    claimed = _claim(submission_id, worker)
    if isinstance(claimed, str):
        return claimed
    submission, attempt = claimed
    # Imported here: only a worker grades, and the grader brings NumPy, which the web process never needs.
    from apps.exercises.grading import exercise_job, grader_get
    from worker.grader import GradingFailed

    grader = grader or grader_get()
    beat = _heartbeat(submission_id, attempt)
    beat.start()
    try:
        result = grader.grade(
            exercise_job(submission.exercise),
            submission.code,
            lambda phase, value: _progress(submission_id, attempt, phase, value),
        )
    except GradingFailed as failure:
        _finish(submission_id, attempt, status=SubmissionStatus.FAILED, error=f"The grader failed: {failure}")
        return "failed"
    finally:
        beat.stop()
    _finish(
        submission_id,
        attempt,
        status=SubmissionStatus.DONE,
        verdict=result["verdict"],
        score=float(result["score"]["total"]),
        result=result,
    )
    return "graded"


def submission_grading_overran(*, submission_id: int, worker: str) -> str:
    """Fail a grading stopped at its time limit, if this worker still owns it."""
    Submission.objects.filter(pk=submission_id, worker=worker, status__in=IN_PROGRESS).update(
        status=SubmissionStatus.FAILED,
        progress=1.0,
        finished_at=timezone.now(),
        error=f"Grading took longer than {settings.GRADER_TASK_SOFT_SECONDS} s and was stopped.",
    )
    return "failed"


def _claim(submission_id: int, worker: str) -> tuple[Submission, int] | str:
    now = timezone.now()
    with transaction.atomic():
        submission = Submission.objects.select_for_update().select_related("exercise").filter(pk=submission_id).first()
        if submission is None:
            return "missing"
        if submission.status in FINISHED:
            return "finished"
        if submission.status in IN_PROGRESS and not _stalled(submission, now):
            return "busy"
        if submission.status in IN_PROGRESS and submission.attempts >= settings.SUBMISSION_MAX_ATTEMPTS:
            _fail_interrupted(submission, now)
            return "failed"
        submission.status = SubmissionStatus.RUNNING
        submission.attempts += 1
        submission.worker = worker
        submission.heartbeat_at = now
        submission.started_at = now
        submission.progress = 0.0
        submission.save(update_fields=["status", "attempts", "worker", "heartbeat_at", "started_at", "progress"])
    return submission, submission.attempts


def _stalled(submission: Submission, now: datetime) -> bool:
    if submission.heartbeat_at is None:
        return True
    if now - submission.heartbeat_at > timedelta(seconds=settings.SUBMISSION_STALE_SECONDS):
        return True
    host, _, pid = submission.worker.rpartition(":")
    if host == socket.gethostname() and pid.isdigit():
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True  # the worker process on this machine is gone
        except PermissionError:
            return False
    return False


def _fail_interrupted(submission: Submission, now: datetime) -> None:
    submission.status = SubmissionStatus.FAILED
    submission.finished_at = now
    submission.error = (
        f"Grading was interrupted {submission.attempts} times (the worker grading it stopped); it was not retried"
        " again. Submit the code again to grade it."
    )
    submission.save(update_fields=["status", "finished_at", "error"])


def _progress(submission_id: int, attempt: int, phase: str, value: float) -> None:
    low, high = PHASE_SPANS.get(phase, (0.0, 1.0))
    new_status = SubmissionStatus.TIMING if phase == "timing" else SubmissionStatus.CHECKING
    Submission.objects.filter(pk=submission_id, attempts=attempt, status__in=IN_PROGRESS).update(
        status=new_status,
        progress=round(low + (high - low) * min(max(value, 0.0), 1.0), 3),
        heartbeat_at=timezone.now(),
    )


def _finish(submission_id: int, attempt: int, *, status: str, **fields: Any) -> bool:
    """Write the outcome, only if this attempt still owns the submission."""
    updated = Submission.objects.filter(pk=submission_id, attempts=attempt, status__in=IN_PROGRESS).update(
        status=status, progress=1.0, finished_at=timezone.now(), **fields
    )
    return updated == 1


def _heartbeat(submission_id: int, attempt: int) -> PeriodicThread:
    """Marks the submission alive every few seconds while a grading runs, whatever it is doing."""

    def mark_alive() -> None:
        Submission.objects.filter(pk=submission_id, attempts=attempt, status__in=IN_PROGRESS).update(
            heartbeat_at=timezone.now()
        )

    return PeriodicThread(
        mark_alive,
        interval=settings.SUBMISSION_STALE_SECONDS / HEARTBEATS_PER_STALE_LIMIT,
        name=f"heartbeat-{submission_id}",
    )


def submissions_reap() -> dict[str, int] | None:
    """One reaping round: re-queue gradings whose worker stopped, send again what the broker never took.

    Every worker runs it on a timer, and beat may too; on PostgreSQL one process at a time does the
    work and the others return None at once. On SQLite each round just runs: it has one writer at a
    time anyway, and a second round finds the first one's work done."""
    with _reaping_alone() as alone:
        if not alone:
            return None
        counts = submissions_reap_stalled()
        counts.update(submissions_republish_queued())
        return counts


@contextmanager
def _reaping_alone() -> Iterator[bool]:
    if connection.vendor != "postgresql":
        yield True
        return
    with connection.cursor() as cursor:
        # A session lock, not a transaction's: it is held while the round hands gradings to the
        # broker after its commits, and it goes with the session if the process dies.
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [REAP_LOCK_KEY])
        row = cursor.fetchone()
    alone = bool(row and row[0])
    try:
        yield alone
    finally:
        if alone:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [REAP_LOCK_KEY])


def submissions_reap_stalled() -> dict[str, int]:
    """Re-queue gradings whose worker stopped, or fail them once they have used their attempts.

    A worker has stopped when its heartbeat is stale, or at once when it ran on this machine and its
    process is gone."""
    now = timezone.now()
    counts = {"requeued": 0, "failed": 0}
    # Few rows (at most one per grading process), so each is judged here, the process check included.
    in_progress = Submission.objects.filter(status__in=IN_PROGRESS).only("pk", "status", "heartbeat_at", "worker")
    for candidate in in_progress:
        if not _stalled(candidate, now):
            continue
        with transaction.atomic():
            submission = Submission.objects.select_for_update().filter(pk=candidate.pk).first()
            if submission is None or submission.status not in IN_PROGRESS or not _stalled(submission, now):
                continue
            if submission.attempts >= settings.SUBMISSION_MAX_ATTEMPTS:
                _fail_interrupted(submission, now)
                counts["failed"] += 1
                continue
            submission.status = SubmissionStatus.QUEUED
            submission.progress = 0.0
            # Not handed to the broker again yet: should this hand-off fail, the next round retries it.
            submission.enqueued_at = None
            submission.save(update_fields=["status", "progress", "enqueued_at"])
            _grade_after_commit(submission.pk)
            counts["requeued"] += 1
    return counts


def submissions_republish_queued() -> dict[str, int]:
    """Send again the queued gradings the broker never took, and those it took so long ago that the
    message must be lost (a broker restarted without its data): a copy of one that did arrive finds
    it taken or finished."""
    now = timezone.now()
    never_taken = Q(
        enqueued_at=None, created_at__lt=now - timedelta(seconds=settings.SUBMISSION_QUEUED_REPUBLISH_SECONDS)
    )
    lost = Q(enqueued_at__lt=now - timedelta(seconds=settings.GRADING_REDELIVERY_SECONDS))
    due = list(
        Submission.objects.filter(status=SubmissionStatus.QUEUED)
        .filter(never_taken | lost)
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)[:REPUBLISH_BATCH]
    )
    return {"republished": gradings_publish(due)}
