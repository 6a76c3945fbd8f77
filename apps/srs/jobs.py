"""Spaced repetition's background jobs, as apps.common.jobs runs them: reschedules, fits and retention advice."""

from __future__ import annotations

from datetime import timedelta

from apps.common.jobs import JobKind
from apps.srs.conf import (
    COURSE_MODEL_TASK,
    PARAMETER_FIT_TASK,
    PUBLISH_TIMEOUT_SECONDS,
    RESCHEDULE_TASK,
    RETENTION_ADVICE_TASK,
)
from apps.srs.models import CourseMemoryModel, ParameterFit, Reschedule, StoredRetentionAdvice

# A running reschedule saves progress after every batch (well under a second each); one silent this long
# lost its worker. A queued one the broker did not take is handed over again after a couple of minutes,
# which keeps a broker outage from being hammered while losing nothing.
RESCHEDULES = JobKind(
    model=Reschedule,
    task_name=RESCHEDULE_TASK,
    what="reschedules",
    stalled_after=timedelta(minutes=10),
    publish_timeout_seconds=PUBLISH_TIMEOUT_SECONDS,
)
# A fit takes well under a second; the task takes the learner, whose queued fit (or a new one) it runs.
# The worker that takes over a stalled fit marks it failed and starts afresh.
PARAMETER_FITS = JobKind(
    model=ParameterFit,
    task_name=PARAMETER_FIT_TASK,
    what="parameter fits",
    stalled_after=timedelta(minutes=15),
    task_argument="learner_id",
    publish_timeout_seconds=PUBLISH_TIMEOUT_SECONDS,
)
# A simulation takes seconds and saves nothing until it ends: ten quiet minutes mean its worker stopped.
RETENTION_ADVICE = JobKind(
    model=StoredRetentionAdvice,
    task_name=RETENTION_ADVICE_TASK,
    what="retention advice computations",
    stalled_after=timedelta(minutes=10),
    publish_timeout_seconds=PUBLISH_TIMEOUT_SECONDS,
)
# A course's training reads every review of the course once and saves its phase as it goes; the longest
# phase, the fit, took 9 s of CPU for 137,000 reviews and grows with them: half an hour of silence means
# its worker stopped. It is tried twice.
COURSE_MODELS = JobKind(
    model=CourseMemoryModel,
    task_name=COURSE_MODEL_TASK,
    what="course memory model trainings",
    stalled_after=timedelta(minutes=30),
    publish_timeout_seconds=PUBLISH_TIMEOUT_SECONDS,
    max_attempts=2,
)
