"""Celery tasks of Anki interchange: replaying a learner's Anki review history, and resuming stalled replays."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from apps.common.publish import tasks_publish
from apps.interchange import anki_history
from apps.interchange.conf import ANKI_HISTORY_IMPORT_TASK, ANKI_HISTORY_IMPORTS_RESUME_TASK
from apps.srs.conf import PUBLISH_TIMEOUT_SECONDS


@shared_task(name=ANKI_HISTORY_IMPORT_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def anki_history_import(import_id: int) -> str | None:
    row = anki_history.anki_history_import_run(import_id=import_id, now=timezone.now())
    return row.status if row is not None else None


@shared_task(name=ANKI_HISTORY_IMPORTS_RESUME_TASK, ignore_result=True)
def anki_history_imports_resume() -> int:
    """Hand over again the imports no worker is running; returns how many."""
    stalled = anki_history.anki_history_imports_stalled(now=timezone.now())
    tasks_publish(ANKI_HISTORY_IMPORT_TASK, stalled, timeout=PUBLISH_TIMEOUT_SECONDS, what="Anki history imports")
    return len(stalled)
