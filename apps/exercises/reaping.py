"""Every worker reaps submissions on its own timer, so recovering gradings needs no beat process."""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import close_old_connections, connection

from apps.exercises.services import submissions_reap

logger = logging.getLogger(__name__)


class Reaper:
    """Runs a reaping round now and then every `interval` seconds, in a thread, until stopped.

    A thread of the worker's main process, not a task: a task would wait behind the gradings queued
    before it, and the main process outlives its pool processes, which are the ones that die
    mid-grade. The rounds of all workers take turns on a database lock (services.submissions_reap)."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="submissions-reaper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        try:
            while True:
                self._round()
                if self._stop.wait(self.interval):
                    return
        finally:
            connection.close()

    def _round(self) -> None:
        # As a request would: a connection the database dropped, or past its age, is replaced.
        close_old_connections()
        try:
            counts = submissions_reap()
        except Exception:
            # The database may be down for a while; the next round tries again.
            logger.exception("Reaping submissions failed")
            return
        if counts and any(counts.values()):
            logger.info("Reaped submissions: %s", counts)


_reaper: Reaper | None = None


@worker_ready.connect
def _start_reaping(**_: Any) -> None:
    global _reaper
    if settings.SUBMISSION_REAP_IN_WORKERS and _reaper is None:
        _reaper = Reaper(settings.SUBMISSION_REAP_SECONDS)
        _reaper.start()


@worker_shutdown.connect
def _stop_reaping(**_: Any) -> None:
    global _reaper
    if _reaper is not None:
        _reaper.stop()
        _reaper = None
