"""Handing tasks over by name: one short try at the broker, and nothing asked of the result store."""

from __future__ import annotations

import threading

from apps.common.publish import tasks_publish
from quizsite.celery import app as celery_app
from tests.support.processes import redis_server


def publish_in_a_fresh_thread(name: str, ids: list[int]) -> int:
    """Celery keeps one result store client per thread: a new thread makes its own from the configuration."""
    sent: list[int] = []
    thread = threading.Thread(target=lambda: sent.append(tasks_publish(name, ids, timeout=2.0, what="checks")))
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "publishing hung"
    return sent[0]


def test_tasks_go_to_the_broker_without_touching_the_result_store():
    conf = celery_app.conf
    saved = conf.broker_url, conf.result_backend
    with redis_server() as broker:
        # A result store nobody answers at: a task published by name must not wait on it or fail with it.
        conf.broker_url, conf.result_backend = broker.url, "redis://127.0.0.1:9/0"
        try:
            assert publish_in_a_fresh_thread("tests.publish.no_such_task", [1, 2, 3]) == 3
        finally:
            conf.broker_url, conf.result_backend = saved


def test_a_broker_that_is_down_takes_nothing_and_fails_no_caller():
    conf = celery_app.conf
    saved = conf.broker_url
    conf.broker_url = "redis://127.0.0.1:9/0"
    try:
        assert publish_in_a_fresh_thread("tests.publish.no_such_task", [1]) == 0
    finally:
        conf.broker_url = saved
