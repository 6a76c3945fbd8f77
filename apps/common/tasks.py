"""Celery tasks of the shared plumbing."""

from celery import shared_task

from apps.common.health import worker_heartbeat_record


@shared_task(ignore_result=False)
def worker_heartbeat() -> str:
    worker_heartbeat_record()
    return "ok"
