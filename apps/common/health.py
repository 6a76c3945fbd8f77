"""Health of the service's dependencies: the database, the broker and the Celery workers."""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.core.cache import cache
from django.db import connection

from quizsite.celery import app as celery_app

WORKER_HEARTBEAT_KEY = "health:worker-heartbeat"
# Beat sends a heartbeat every 60 s; two missed beats mean no worker is consuming `default`.
WORKER_STALE_AFTER_SECONDS = 150


@dataclass(frozen=True)
class ComponentHealth:
    ok: bool
    detail: str


def database_health() -> ComponentHealth:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return ComponentHealth(ok=False, detail=f"{type(exc).__name__}: {exc}")
    return ComponentHealth(ok=True, detail=connection.vendor)


def broker_health() -> ComponentHealth:
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
            transport = conn.transport_cls
    except Exception as exc:
        return ComponentHealth(ok=False, detail=f"{type(exc).__name__}: {exc}")
    return ComponentHealth(ok=True, detail=str(transport))


def worker_heartbeat_record(*, now: float | None = None) -> None:
    cache.set(WORKER_HEARTBEAT_KEY, now if now is not None else time.time(), timeout=None)


def worker_health(*, now: float | None = None) -> ComponentHealth:
    """Workers are reported, not required: the API serves content without them."""
    try:
        seen = cache.get(WORKER_HEARTBEAT_KEY)
    except Exception as exc:
        return ComponentHealth(ok=False, detail=f"cache unavailable: {exc}")
    if seen is None:
        return ComponentHealth(ok=False, detail="no heartbeat yet")
    age = (now if now is not None else time.time()) - float(seen)
    if age > WORKER_STALE_AFTER_SECONDS:
        return ComponentHealth(ok=False, detail=f"last heartbeat {age:.0f} s ago")
    return ComponentHealth(ok=True, detail=f"last heartbeat {age:.0f} s ago")
