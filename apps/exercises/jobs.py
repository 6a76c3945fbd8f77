"""Grading as apps.common.jobs runs it: a submission is the job, its grading the task."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings

from apps.common.jobs import JobKind
from apps.exercises.conf import GRADE_SUBMISSION_TASK
from apps.exercises.models import IN_PROGRESS, Submission

# A grading marks itself alive several times within SUBMISSION_STALE_SECONDS, whatever it is doing, so a
# silent one lost its worker. One the broker lost comes back only after any grading would have ended,
# so a grading waiting behind a long queue is never sent twice.
GRADINGS = JobKind(
    model=Submission,
    task_name=GRADE_SUBMISSION_TASK,
    what="gradings",
    stalled_after=timedelta(seconds=settings.SUBMISSION_STALE_SECONDS),
    republish_after=timedelta(seconds=settings.SUBMISSION_QUEUED_REPUBLISH_SECONDS),
    redeliver_after=timedelta(seconds=settings.GRADING_REDELIVERY_SECONDS),
    batch=500,
    publish_timeout_seconds=settings.GRADING_PUBLISH_TIMEOUT_SECONDS,
    running_statuses=IN_PROGRESS,
    max_attempts=settings.SUBMISSION_MAX_ATTEMPTS,
    interrupted_message=(
        "Grading was interrupted {attempts} times (the worker grading it stopped); it was not retried again."
        " Submit the code again to grade it."
    ),
)
