"""Celery tasks for grading; they run on the `gpu` queue and take ids only."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import worker_process_init, worker_process_shutdown
from django.conf import settings

from apps.exercises.services import submission_grade, submissions_reap_stalled, worker_name


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.GRADER_TASK_SOFT_SECONDS,
    time_limit=settings.GRADER_TASK_SOFT_SECONDS + 60,
    max_retries=None,
)
def grade_submission(self: Any, submission_id: int) -> str:
    outcome = submission_grade(submission_id=submission_id, worker=worker_name())
    if outcome == "busy":
        # Another worker may be grading it; look again once its heartbeat would have gone stale.
        raise self.retry(countdown=settings.SUBMISSION_STALE_SECONDS)
    return outcome


@shared_task(ignore_result=True)
def submissions_reap() -> dict[str, int]:
    return submissions_reap_stalled()


@worker_process_init.connect
def _start_warm_sandboxes(**_: Any) -> None:
    """Each worker process starts its warm TensorFlow sandboxes before the first grading arrives."""
    if settings.GRADER_WARM_ON_START:
        from apps.exercises.grading import grader_get

        grader_get().warm_up()


@worker_process_shutdown.connect
def _stop_warm_sandboxes(**_: Any) -> None:
    from apps.exercises.grading import grader_close

    grader_close()
