"""Celery tasks of spaced repetition: they take ids and call one service."""

from __future__ import annotations

import logging

from celery import current_app, shared_task
from django.utils import timezone

from apps.srs import anki_history, optimization, rescheduling, retention_advising

logger = logging.getLogger(__name__)

# The broker gets one short try; an import it did not take stays queued in its row and is handed over
# again by `anki_history_imports_resume`.
_PUBLISH_TIMEOUT_SECONDS = 2.0


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def anki_history_import(import_id: int) -> str | None:
    row = anki_history.anki_history_import_run(import_id=import_id, now=timezone.now())
    return row.status if row is not None else None


def anki_history_import_publish(import_id: int) -> bool:
    """Hand the import to a worker; False when the broker did not take it (the import stays queued)."""
    timeout = _PUBLISH_TIMEOUT_SECONDS
    try:
        with current_app.connection_for_write(
            connect_timeout=timeout,
            transport_options={"max_retries": 0, "socket_connect_timeout": timeout, "socket_timeout": timeout},
        ) as connection:
            anki_history_import.apply_async((import_id,), connection=connection, retry=False)
    except Exception as error:
        # Whatever the transport raised: the request has its answer already, and the import says why it stopped.
        logger.warning("Broker unreachable (%r): Anki history import %s stays queued", error, import_id)
        return False
    return True


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
    timeout = _PUBLISH_TIMEOUT_SECONDS
    try:
        with current_app.connection_for_write(
            connect_timeout=timeout,
            transport_options={"max_retries": 0, "socket_connect_timeout": timeout, "socket_timeout": timeout},
        ) as connection:
            reschedule.apply_async((reschedule_id,), connection=connection, retry=False)
    except Exception as error:
        # Whatever the transport raised: the change that queued it is saved, and the row is the outbox.
        logger.warning("Broker unreachable (%r): reschedule %s stays queued", error, reschedule_id)
        return False
    return True


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
    timeout = _PUBLISH_TIMEOUT_SECONDS
    try:
        with current_app.connection_for_write(
            connect_timeout=timeout,
            transport_options={"max_retries": 0, "socket_connect_timeout": timeout, "socket_timeout": timeout},
        ) as connection:
            parameter_fit.apply_async((learner_id,), connection=connection, retry=False)
    except Exception as error:
        # Whatever the transport raised: a fit asked for stays queued in its row, and the nightly run finds it.
        logger.warning("Broker unreachable (%r): parameter fit of learner %s not sent", error, learner_id)
        return False
    return True


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
    timeout = _PUBLISH_TIMEOUT_SECONDS
    try:
        with current_app.connection_for_write(
            connect_timeout=timeout,
            transport_options={"max_retries": 0, "socket_connect_timeout": timeout, "socket_timeout": timeout},
        ) as connection:
            retention_advice.apply_async((advice_id,), connection=connection, retry=False)
    except Exception as error:
        # Whatever the transport raised: the response that asked for it said "computing", and the row is the outbox.
        logger.warning("Broker unreachable (%r): retention advice %s stays queued", error, advice_id)
        return False
    return True


@shared_task(ignore_result=True)
def retention_advice_resume() -> int:
    """Hand over again the retention advice no worker is computing; returns how many."""
    stalled = retention_advising.retention_advice_stalled(now=timezone.now())
    for advice_id in stalled:
        retention_advice_publish(advice_id)
    return len(stalled)
