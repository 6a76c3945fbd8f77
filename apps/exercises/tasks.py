"""Celery tasks for grading: they run on the grading queue and take ids only."""

from __future__ import annotations

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from apps.common.jobs import job_worker_name
from apps.exercises import services
from apps.exercises.conf import GRADE_SUBMISSION_TASK


@shared_task(
    name=GRADE_SUBMISSION_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    # The outcome is in the database; storing it again would tie every hand-off to the result backend.
    ignore_result=True,
    soft_time_limit=settings.GRADER_TASK_SOFT_SECONDS,
    time_limit=settings.GRADER_TASK_HARD_SECONDS,
)
def grade_submission(submission_id: int) -> str:
    worker = job_worker_name()
    try:
        return services.submission_grade(submission_id=submission_id, worker=worker)
    except SoftTimeLimitExceeded:
        return services.submission_grading_overran(submission_id=submission_id, worker=worker)
