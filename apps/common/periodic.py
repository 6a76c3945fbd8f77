"""A daemon thread that does one thing every few seconds until it is stopped."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from django.db import close_old_connections, connection

logger = logging.getLogger(__name__)


class PeriodicThread:
    """Calls `action` every `interval` seconds (first at once when `at_start`) until `stop()`.

    A failing call is logged and the next one tried: a database that is away for a while must not end
    the thread for good. Before each call a connection the database dropped, or past its age, is
    replaced, as at the start of a request; the thread's connection is closed when it ends."""

    def __init__(self, action: Callable[[], None], *, interval: float, name: str, at_start: bool = False) -> None:
        self.action = action
        self.interval = interval
        self.at_start = at_start
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        try:
            if self.at_start:
                self._call()
            while not self._stop.wait(self.interval):
                self._call()
        finally:
            connection.close()

    def _call(self) -> None:
        close_old_connections()
        try:
            self.action()
        except Exception:
            logger.exception("%s failed; trying again in %s s", self._thread.name, self.interval)
