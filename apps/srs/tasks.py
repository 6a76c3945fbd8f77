"""Celery tasks of spaced repetition: they take ids and call one service."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from apps.common.publish import tasks_publish
from apps.srs.adaptation import course_models, optimization, rescheduling, retention_advising
from apps.srs.conf import (
    COURSE_MODEL_TASK,
    PARAMETER_FIT_TASK,
    PUBLISH_TIMEOUT_SECONDS,
    RESCHEDULE_TASK,
    RETENTION_ADVICE_TASK,
)


@shared_task(name=RESCHEDULE_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def reschedule(reschedule_id: int) -> str | None:
    row = rescheduling.reschedule_run(reschedule_id=reschedule_id)
    return row.status if row is not None else None


@shared_task(name=PARAMETER_FIT_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def parameter_fit(learner_id: int) -> str | None:
    fit = optimization.parameter_fit_run(learner_id=learner_id, now=timezone.now())
    return fit.status if fit is not None else None


@shared_task(ignore_result=True)
def parameter_fits_dispatch() -> int:
    """Send one fit task per learner due a fit; returns how many were sent."""
    return optimization.parameter_fits_dispatch(now=timezone.now(), send=_parameter_fit_publish)


def _parameter_fit_publish(learner_id: int) -> None:
    tasks_publish(PARAMETER_FIT_TASK, [learner_id], timeout=PUBLISH_TIMEOUT_SECONDS, what="parameter fits")


@shared_task(name=RETENTION_ADVICE_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def retention_advice(advice_id: int) -> str | None:
    row = retention_advising.retention_advice_run(advice_id=advice_id, now=timezone.now())
    return row.status if row is not None else None


@shared_task(name=COURSE_MODEL_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def course_model_train(course_model_id: int) -> str | None:
    row = course_models.course_model_run(course_model_id=course_model_id, now=timezone.now())
    return row.status if row is not None else None


@shared_task(ignore_result=True)
def course_models_dispatch() -> int:
    """Queue a training for each course due one; returns how many were queued."""
    return course_models.course_models_dispatch(now=timezone.now())
