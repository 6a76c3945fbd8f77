"""Every worker reaps submissions on its own timer, so recovering gradings needs no beat process."""

from __future__ import annotations

import logging
from typing import Any

from celery.signals import worker_ready, worker_shutdown
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
