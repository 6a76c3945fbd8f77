"""The periodic thread keeps going when a call fails, and stops when told."""

from __future__ import annotations

import threading

import pytest

from apps.common.periodic import PeriodicThread
from tests.support.processes import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_failing_call_is_logged_and_the_next_one_still_made(caplog):
    calls: list[int] = []

    def flaky() -> None:
        calls.append(len(calls))
        if len(calls) == 1:
            raise RuntimeError("the database is away")

    thread = PeriodicThread(flaky, interval=0.01, name="flaky-job", at_start=True)
    thread.start()
    try:
        wait_until(lambda: len(calls) >= 3, timeout=10, what="three calls")
    finally:
        thread.stop()
    assert "flaky-job failed" in caplog.text and "the database is away" in caplog.text


def test_stop_ends_the_thread_and_no_call_follows():
    called = threading.Event()
    thread = PeriodicThread(called.set, interval=3600, name="hourly-job")
    thread.start()
    thread.stop()
    assert not thread._thread.is_alive()
    assert not called.is_set()  # without at_start, the first call waits a whole interval
