"""Handing tasks to the broker without ever holding up or failing the caller: one short try, then the outbox.

Tasks are named, never imported: the code that hands one over needs nothing of the module that defines it,
so services never import Celery task objects and no tasks module is imported but by Celery."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial

from celery import current_app
from django.db import transaction

logger = logging.getLogger(__name__)


def tasks_publish(task_name: str, ids: Sequence[int], *, timeout: float, what: str) -> int:
    """Send the task registered as `task_name` once per id, in order, over one connection; returns how many went.

    One connection attempt, short socket timeouts and no retries (kombu's defaults retry for
    seconds): with the broker down this returns within `timeout`, having logged why. Every caller
    keeps its work in a row (the outbox) that a periodic job hands over again, so a broker fault is
    logged, never passed on.
    """
    sent = 0
    try:
        with current_app.connection_for_write(
            connect_timeout=timeout,
            transport_options={"max_retries": 0, "socket_connect_timeout": timeout, "socket_timeout": timeout},
        ) as connection:
            for item_id in ids:
                # Every task handed over here keeps its outcome in its row. By name, Celery cannot know the
                # task ignores its result, and would otherwise wait on the result store for each one.
                current_app.send_task(
                    task_name, args=(item_id,), connection=connection, retry=False, ignore_result=True
                )
                sent += 1
    except Exception as error:
        # Whatever the transport raised (refused, timed out, unknown host): the rows stay queued.
        logger.warning(
            "Broker unreachable (%r): %d of %d %s handed over, the rest stay queued", error, sent, len(ids), what
        )
    return sent


def task_publish_after_commit(task_name: str, item_id: int, *, timeout: float, what: str) -> None:
    """Send the task for one id once the current transaction commits (at once outside one).

    The row the id names was written in that transaction and is the outbox: a worker never looks for a
    row that is not there yet, and a rolled-back row is never handed over."""
    transaction.on_commit(partial(tasks_publish, task_name, [item_id], timeout=timeout, what=what), robust=True)
