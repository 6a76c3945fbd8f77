"""What every worker does while it runs: the resume round of background jobs on its own timer, so that
recovering a grading or a reschedule whose worker died needs no beat process."""

from __future__ import annotations

import logging
from typing import Any

from celery.signals import worker_ready, worker_shutdown
from django.conf import settings

from apps.common.jobs import jobs_resume
from apps.common.periodic import PeriodicThread

logger = logging.getLogger(__name__)


def _resume_round() -> None:
    recovered = jobs_resume()
    if recovered is None:
        return
    busy = {name: outcome for name, outcome in recovered.items() if outcome.handed_over or outcome.failed}
    if busy:
        logger.info("Resumed background jobs: %s", busy)


# A thread of the worker's main process, not a task: a task would wait behind the jobs queued before it,
# and the main process outlives its pool processes, which are the ones that die mid-job. The rounds of
# all workers (and beat's) take turns on a database lock (apps.common.jobs.jobs_resume).
_resumer: PeriodicThread | None = None


@worker_ready.connect
def _start_resuming(**_: Any) -> None:
    global _resumer
    if settings.JOBS_RESUME_IN_WORKERS and _resumer is None:
        _resumer = PeriodicThread(
            _resume_round, interval=settings.JOBS_RESUME_SECONDS, name="jobs-resumer", at_start=True
        )
        _resumer.start()


@worker_shutdown.connect
def _stop_resuming(**_: Any) -> None:
    global _resumer
    if _resumer is not None:
        _resumer.stop()
        _resumer = None
