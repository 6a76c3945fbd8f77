"""What a grading worker does as it starts and stops: its processes warm their sandboxes before the first
grading arrives, time the references of the exercises in quiet moments (so gradings find the host's
stored figures, worker/baselines.py), and stop both as they end. (Recovering gradings is every worker's
resume round: apps.common.worker_signals.)"""

from __future__ import annotations

import logging
from typing import Any

from celery import current_app
from celery.signals import worker_process_init, worker_process_shutdown
from django.conf import settings

from apps.common.periodic import PeriodicThread

logger = logging.getLogger(__name__)


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
    _start_refreshing_references()


def _refresh_references() -> None:
    from apps.exercises.grading import exercise_job, grader_get
    from apps.exercises.selectors import pipeline_exercises

    jobs = [exercise_job(exercise) for exercise in pipeline_exercises()]
    # Figures halfway to their age limit are measured again, before a grading would have to.
    measured = grader_get().references_refresh(jobs, settings.GRADER_BASELINE_MAX_AGE_SECONDS / 2)
    if measured:
        logger.info("Timed the references of %s", ", ".join(measured))


# A thread of each grading process, not a task: a task would be a grading of the queue's, and the figures
# are the host's, so every host measures its own. It gives way to gradings (Grader.references_refresh).
_refresher: PeriodicThread | None = None


def _start_refreshing_references() -> None:
    global _refresher
    interval = settings.GRADER_BASELINE_REFRESH_SECONDS
    if settings.GRADER_BASELINES and interval > 0 and _consumes_grading_queue() and _refresher is None:
        _refresher = PeriodicThread(_refresh_references, interval=interval, name="references-refresher", at_start=True)
        _refresher.start()


@worker_process_shutdown.connect
def _stop_warm_sandboxes(**_: Any) -> None:
    global _refresher
    from apps.exercises.grading import grader_close

    if _refresher is not None:
        _refresher.stop()
        _refresher = None
    grader_close()
