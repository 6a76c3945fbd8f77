"""Celery tasks of spaced repetition: they take ids and call one service."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from apps.common.publish import tasks_publish
from apps.srs import anki_history, optimization, rescheduling, retention_advising

# The broker gets one short try; work it did not take stays queued in its row, and each kind's resume job
# (or the nightly dispatch, for fits) hands it over again.
_PUBLISH_TIMEOUT_SECONDS = 2.0


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def anki_history_import(import_id: int) -> str | None:
    row = anki_history.anki_history_import_run(import_id=import_id, now=timezone.now())
    return row.status if row is not None else None


def anki_history_import_publish(import_id: int) -> bool:
    """Hand the import to a worker; False when the broker did not take it (the import stays queued)."""
    return (
        tasks_publish(anki_history_import, [import_id], timeout=_PUBLISH_TIMEOUT_SECONDS, what="Anki history imports")
        == 1
    )


@shared_task(ignore_result=True)
def anki_history_imports_resume() -> int:
    """Hand over again the imports no worker is running; returns how many."""
    stalled = anki_history.anki_history_imports_stalled(now=timezone.now())
    for import_id in stalled:
        anki_history_import_publish(import_id)
    return len(stalled)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def reschedule(reschedule_id: int) -> str | None:
    row = rescheduling.reschedule_run(reschedule_id=reschedule_id)
    return row.status if row is not None else None


def reschedule_publish(reschedule_id: int) -> bool:
    """Hand the reschedule to a worker; False when the broker did not take it (the run stays queued)."""
    return tasks_publish(reschedule, [reschedule_id], timeout=_PUBLISH_TIMEOUT_SECONDS, what="reschedules") == 1


@shared_task(ignore_result=True)
def reschedules_resume() -> int:
    """Hand over again the reschedules no worker is running; returns how many."""
    stalled = rescheduling.reschedules_stalled(now=timezone.now())
    for reschedule_id in stalled:
        reschedule_publish(reschedule_id)
    return len(stalled)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def parameter_fit(learner_id: int) -> str | None:
    fit = optimization.parameter_fit_run(learner_id=learner_id, now=timezone.now())
    return fit.status if fit is not None else None


def parameter_fit_publish(learner_id: int) -> bool:
    """Hand the learner's fit to a worker; False when the broker did not take it (the nightly run sends it again)."""
    return tasks_publish(parameter_fit, [learner_id], timeout=_PUBLISH_TIMEOUT_SECONDS, what="parameter fits") == 1


@shared_task(ignore_result=True)
def parameter_fits_dispatch() -> int:
    """Send one fit task per learner due a fit; returns how many were sent."""
    return optimization.parameter_fits_dispatch(now=timezone.now(), send=parameter_fit_publish)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def retention_advice(advice_id: int) -> str | None:
    row = retention_advising.retention_advice_run(advice_id=advice_id, now=timezone.now())
    return row.status if row is not None else None


def retention_advice_publish(advice_id: int) -> bool:
    """Hand the advice to a worker; False when the broker did not take it (the row stays queued)."""
    return (
        tasks_publish(
            retention_advice, [advice_id], timeout=_PUBLISH_TIMEOUT_SECONDS, what="retention advice computations"
        )
        == 1
    )


@shared_task(ignore_result=True)
def retention_advice_resume() -> int:
    """Hand over again the retention advice no worker is computing; returns how many."""
    stalled = retention_advising.retention_advice_stalled(now=timezone.now())
    for advice_id in stalled:
        retention_advice_publish(advice_id)
    return len(stalled)
