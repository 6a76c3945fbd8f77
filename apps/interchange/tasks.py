"""Celery task of Anki interchange: replaying a learner's Anki review history (apps.common.jobs resumes it)."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from apps.interchange import anki_history
from apps.interchange.conf import ANKI_HISTORY_IMPORT_TASK


@shared_task(name=ANKI_HISTORY_IMPORT_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def anki_history_import(import_id: int) -> str | None:
    row = anki_history.anki_history_import_run(import_id=import_id, now=timezone.now())
    return row.status if row is not None else None
