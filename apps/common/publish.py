"""Handing tasks to the broker without ever holding up or failing the caller: one short try, then the outbox."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from celery import Task, current_app

logger = logging.getLogger(__name__)


def tasks_publish(task: Task[Any, Any] | str, ids: Sequence[int], *, timeout: float, what: str) -> int:
    """Send `task` (the task, or its registered name) once per id, in order, over one connection; returns how many went.

    By name, the caller needs no import of the module that defines the task, and routes still apply.

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
                if isinstance(task, str):
                    current_app.send_task(task, args=(item_id,), connection=connection, retry=False)
                else:
                    task.apply_async((item_id,), connection=connection, retry=False)
                sent += 1
    except Exception as error:
        # Whatever the transport raised (refused, timed out, unknown host): the rows stay queued.
        logger.warning(
            "Broker unreachable (%r): %d of %d %s handed over, the rest stay queued", error, sent, len(ids), what
        )
    return sent
