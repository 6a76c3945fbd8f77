"""What a grading worker does as it starts and stops: its processes warm their sandboxes before the first
grading arrives, and stop them as they end. (Recovering gradings is every worker's resume round:
apps.common.worker_signals.)"""

from __future__ import annotations

from typing import Any

from celery import current_app
from celery.signals import worker_process_init, worker_process_shutdown
from django.conf import settings


def _consumes_grading_queue() -> bool:
    consumed = current_app.amqp.queues.consume_from
    return consumed is None or settings.GRADING_QUEUE in consumed


@worker_process_init.connect
def _start_warm_sandboxes(**_: Any) -> None:
    """A grading worker's processes start their warm sandboxes before the first grading arrives;
    workers that only take other queues never grade, so they keep none."""
    if settings.GRADER_WARM_ON_START and _consumes_grading_queue():
        from apps.exercises.grading import grader_get

        grader_get().warm_up()


@worker_process_shutdown.connect
def _stop_warm_sandboxes(**_: Any) -> None:
    from apps.exercises.grading import grader_close

    grader_close()
