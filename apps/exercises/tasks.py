"""Celery tasks for grading (they run on the grading queue and take ids only), and handing them to the broker."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from celery import current_app, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import worker_process_init, worker_process_shutdown
from django.conf import settings

from apps.common.publish import tasks_publish
from apps.exercises import services


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    # The outcome is in the database; storing it again would tie every hand-off to the result backend.
    ignore_result=True,
    soft_time_limit=settings.GRADER_TASK_SOFT_SECONDS,
    time_limit=settings.GRADER_TASK_HARD_SECONDS,
)
def grade_submission(submission_id: int) -> str:
    worker = services.worker_name()
    try:
        return services.submission_grade(submission_id=submission_id, worker=worker)
    except SoftTimeLimitExceeded:
        return services.submission_grading_overran(submission_id=submission_id, worker=worker)


@shared_task(ignore_result=True)
def submissions_reap() -> dict[str, int] | None:
    """Beat's reaping round, on the default queue: the same round every worker runs on its own timer."""
    return services.submissions_reap()


def gradings_publish(submission_ids: Sequence[int]) -> int:
    """Send a grading task for each submission, in order, over one connection; returns how many went.

    With the broker down this returns within GRADING_PUBLISH_TIMEOUT_SECONDS, having logged why, and
    the caller leaves the rest queued for the reaper."""
    return tasks_publish(
        grade_submission, submission_ids, timeout=settings.GRADING_PUBLISH_TIMEOUT_SECONDS, what="gradings"
    )


def _consumes_grading_queue() -> bool:
    consumed = current_app.amqp.queues.consume_from
    return consumed is None or settings.GRADING_QUEUE in consumed


@worker_process_init.connect
def _start_warm_sandboxes(**_: Any) -> None:
    """A grading worker's processes start their warm sandboxes before the first grading arrives;
    workers that only take other queues never grade, so they keep none."""
    if settings.GRADER_WARM_ON_START and _consumes_grading_queue():
        from apps.exercises.grading import grader_get

        grader_get().warm_up()


@worker_process_shutdown.connect
def _stop_warm_sandboxes(**_: Any) -> None:
    from apps.exercises.grading import grader_close

    grader_close()
