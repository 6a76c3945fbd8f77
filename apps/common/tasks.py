"""Celery tasks of the shared plumbing."""

from celery import shared_task
from django.utils import timezone

from apps.common.health import worker_heartbeat_record
from apps.common.jobs import Recovered
from apps.common.jobs import jobs_resume as jobs_resume_round


@shared_task(ignore_result=False)
def worker_heartbeat() -> str:
    worker_heartbeat_record()
    return "ok"


@shared_task(name="apps.common.tasks.jobs_resume", ignore_result=True)
def jobs_resume() -> dict[str, Recovered] | None:
    """Hand every kind's stalled background jobs over again; what became of each kind's (None: another
    process's round was running)."""
    return jobs_resume_round(now=timezone.now())
