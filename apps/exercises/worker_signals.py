"""What a worker does as it starts and stops: grading processes warm their sandboxes before the first grading
arrives, and every worker reaps submissions on its own timer, so recovering gradings needs no beat process."""

from __future__ import annotations

import logging
from typing import Any

from celery import current_app
from celery.signals import worker_process_init, worker_process_shutdown, worker_ready, worker_shutdown
from django.conf import settings

from apps.common.periodic import PeriodicThread
from apps.exercises.services import submissions_reap

logger = logging.getLogger(__name__)


def _reaping_round() -> None:
    counts = submissions_reap()
    if counts and any(counts.values()):
        logger.info("Reaped submissions: %s", counts)


# A thread of the worker's main process, not a task: a task would wait behind the gradings queued
# before it, and the main process outlives its pool processes, which are the ones that die
# mid-grade. The rounds of all workers take turns on a database lock (services.submissions_reap).
_reaper: PeriodicThread | None = None


@worker_ready.connect
def _start_reaping(**_: Any) -> None:
    global _reaper
    if settings.SUBMISSION_REAP_IN_WORKERS and _reaper is None:
        _reaper = PeriodicThread(
            _reaping_round, interval=settings.SUBMISSION_REAP_SECONDS, name="submissions-reaper", at_start=True
        )
        _reaper.start()


@worker_shutdown.connect
def _stop_reaping(**_: Any) -> None:
    global _reaper
    if _reaper is not None:
        _reaper.stop()
        _reaper = None


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
