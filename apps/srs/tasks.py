"""Celery tasks of spaced repetition: they take ids and call one service."""

from __future__ import annotations

import logging

from celery import current_app, shared_task
from django.utils import timezone

from apps.srs import anki_history

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
