"""Health of the service's dependencies: the database, the cache, the broker and the Celery workers.

Only the database is required to serve the API: without the cache, requests are not throttled; without
the broker, submissions wait to be graded; without workers, nothing is graded or reminded. So the
service is "unavailable" only when the database is down, and "degraded" when anything else is.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Literal

from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.db import connection

from quizsite.celery import app as celery_app

WORKER_HEARTBEAT_KEY = "health:worker-heartbeat"
# Beat sends a heartbeat every 60 s; two missed beats mean no worker is consuming `default`.
WORKER_STALE_AFTER_SECONDS = 150
# Each check answers within about this long, so that a load balancer's probe (commonly 2-5 s) hears
# about a component that hangs instead of timing out itself. The cache client has its own, shorter
# bounds (CACHES in settings); the broker's connection gets these.
CHECK_SECONDS = 1.0
# The database's answer alone decides 503, which takes the web tier out of the load balancer: a database
# slowed by load (a new connection under a saturated CPU) must not be mistaken for a dead one.
DATABASE_CHECK_SECONDS = 2.0
_BROKER_SOCKET_SECONDS = CHECK_SECONDS / 2

HealthStatus = Literal["ok", "degraded", "unavailable"]


@dataclass(frozen=True)
class ComponentHealth:
    ok: bool
    detail: str


@dataclass(frozen=True)
class ServiceHealth:
    database: ComponentHealth
    cache: ComponentHealth
    broker: ComponentHealth
    worker: ComponentHealth

    @property
    def status(self) -> HealthStatus:
        if not self.database.ok:
            return "unavailable"
        if self.cache.ok and self.broker.ok and self.worker.ok:
            return "ok"
        return "degraded"


def _failed(exc: Exception) -> ComponentHealth:
    return ComponentHealth(ok=False, detail=f"{type(exc).__name__}: {exc}")


def _database_check() -> ComponentHealth:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return _failed(exc)
    finally:
        connection.close()
    return ComponentHealth(ok=True, detail="postgresql")


def database_health(*, timeout: float = DATABASE_CHECK_SECONDS) -> ComponentHealth:
    """SELECT 1 on a connection of its own, given up after `timeout` seconds.

    The database driver's own connect timeout cannot be made this short (libpq's is at least 2 s, and
    unset it is the operating system's, minutes), so the check runs on a thread of its own, which
    opens and closes its own connection; a hung one is left to end by itself.
    """
    result: list[ComponentHealth] = []
    thread = threading.Thread(target=lambda: result.append(_database_check()), name="health-database", daemon=True)
    thread.start()
    thread.join(timeout)
    return result[0] if result else ComponentHealth(ok=False, detail=f"no answer within {timeout:g} s")


def broker_health() -> ComponentHealth:
    # Redis transport options bound a connection that hangs; other transports read connect_timeout.
    bounds = {"socket_connect_timeout": _BROKER_SOCKET_SECONDS, "socket_timeout": _BROKER_SOCKET_SECONDS}
    try:
        with celery_app.connection_for_write(connect_timeout=_BROKER_SOCKET_SECONDS, transport_options=bounds) as conn:
            conn.ensure_connection(max_retries=0, timeout=CHECK_SECONDS)
            transport = conn.transport_cls
    except Exception as exc:
        return _failed(exc)
    return ComponentHealth(ok=True, detail=str(transport))


def worker_heartbeat_record(*, now: float | None = None) -> None:
    caches[DEFAULT_CACHE_ALIAS].set(WORKER_HEARTBEAT_KEY, now if now is not None else time.time(), timeout=None)


def _worker_from_heartbeat(seen: object, *, now: float | None) -> ComponentHealth:
    """Workers are reported, not required: the API serves content without them."""
    if seen is None:
        return ComponentHealth(ok=False, detail="no heartbeat yet")
    age = (now if now is not None else time.time()) - float(str(seen))
    if age > WORKER_STALE_AFTER_SECONDS:
        return ComponentHealth(ok=False, detail=f"last heartbeat {age:.0f} s ago")
    return ComponentHealth(ok=True, detail=f"last heartbeat {age:.0f} s ago")


def cache_and_worker_health(*, now: float | None = None) -> tuple[ComponentHealth, ComponentHealth]:
    """The cache, read once: the workers' heartbeat is what is read, so one round trip tells both."""
    cache = caches[DEFAULT_CACHE_ALIAS]
    try:
        seen = cache.get(WORKER_HEARTBEAT_KEY)
    except Exception as exc:
        unknown = ComponentHealth(ok=False, detail="unknown: the cache, which holds the workers' heartbeat, is down")
        return _failed(exc), unknown
    return ComponentHealth(ok=True, detail=type(cache).__name__), _worker_from_heartbeat(seen, now=now)


def worker_health(*, now: float | None = None) -> ComponentHealth:
    return cache_and_worker_health(now=now)[1]


def service_health(*, now: float | None = None) -> ServiceHealth:
    """Every component, each bounded in time (see CHECK_SECONDS)."""
    cache_health, worker = cache_and_worker_health(now=now)
    return ServiceHealth(database=database_health(), cache=cache_health, broker=broker_health(), worker=worker)
