"""Reminder jobs: beat runs the decision every 15 minutes (editable in the admin); batches are sent by workers."""

from __future__ import annotations

import uuid
from typing import Any

from celery import shared_task
from django.utils import timezone

from apps.reminders.services import reminder_batch_send, reminders_send


@shared_task(name="apps.reminders.tasks.send_review_reminders", soft_time_limit=600, time_limit=660)
def send_review_reminders() -> dict[str, Any]:
    run = reminders_send(now=timezone.now(), send_batch=lambda claim: send_reminder_batch.delay(str(claim)))
    return {"candidates": run.candidates, "claimed": run.claimed, "skipped": run.skipped, "batches": run.batches}


# Late acknowledgement: a batch whose worker died is delivered again, and its claimed rows are sent then;
# the rows already being sent are never sent twice.
@shared_task(
    name="apps.reminders.tasks.send_reminder_batch",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=600,
    time_limit=660,
)
def send_reminder_batch(claim: str) -> dict[str, int]:
    sent = reminder_batch_send(claim=uuid.UUID(claim), now=timezone.now())
    return {"sent": sent.sent, "failed": sent.failed}
