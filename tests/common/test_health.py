"""/healthz reports the database, the cache, the broker and the workers; only a database outage is a 503."""

from __future__ import annotations

import socket

import pytest
from django.db import connection

from apps.common.health import (
    DATABASE_CHECK_SECONDS,
    WORKER_HEARTBEAT_KEY,
    ComponentHealth,
    ServiceHealth,
    worker_health,
    worker_heartbeat_record,
)
from quizsite.celery import app as celery_app
from tests.support.processes import free_port

pytestmark = pytest.mark.django_db


def test_healthy_service(api_client):
    response = api_client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"status", "database", "cache", "broker", "worker"}
    assert body["status"] in {"ok", "degraded"}  # no worker runs in most tests
    assert body["database"]["ok"] is True
    assert body["cache"]["ok"] is True
    assert body["broker"]["ok"] is True


def test_unreachable_broker_is_reported_but_the_service_stays_up(api_client):
    original = celery_app.conf.broker_url
    # Port 9 (discard) on loopback: nothing listens there, so the connection is refused at once.
    celery_app.conf.broker_url = "redis://127.0.0.1:9/0"
    try:
        response = api_client.get("/healthz")
    finally:
        celery_app.conf.broker_url = original
    assert response.status_code == 200
    assert response.json()["status"] == "degraded"
    assert response.json()["broker"]["ok"] is False
    assert "Connection refused" in response.json()["broker"]["detail"]


def test_only_a_database_outage_is_unavailable():
    up = ComponentHealth(ok=True, detail="")
    down = ComponentHealth(ok=False, detail="")
    assert ServiceHealth(database=up, cache=up, broker=up, worker=up).status == "ok"
    for degraded in (
        ServiceHealth(database=up, cache=down, broker=up, worker=up),
        ServiceHealth(database=up, cache=up, broker=down, worker=up),
        ServiceHealth(database=up, cache=up, broker=up, worker=down),
    ):
        assert degraded.status == "degraded"
    assert ServiceHealth(database=down, cache=up, broker=up, worker=up).status == "unavailable"


def _database_at(monkeypatch, port: int) -> None:
    """Point new connections at 127.0.0.1:port; the test's own connection is already open and stays so.

    Every thread's connection shares this settings dict, and the health check connects on a thread.
    """
    monkeypatch.setitem(connection.settings_dict, "HOST", "127.0.0.1")
    monkeypatch.setitem(connection.settings_dict, "PORT", str(port))


def test_a_database_that_cannot_be_reached_is_503(api_client, monkeypatch):
    _database_at(monkeypatch, free_port())
    response = api_client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["database"]["ok"] is False
    assert body["cache"]["ok"] is True


def test_a_database_that_never_answers_is_given_up_after_its_limit(api_client, monkeypatch):
    # A socket that listens but never accepts: the kernel completes the connection and nothing speaks.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        _database_at(monkeypatch, silent.getsockname()[1])
        response = api_client.get("/healthz")
    # Closing the socket resets the waiting connection, so the abandoned check ends too.
    assert response.status_code == 503
    assert response.json()["database"] == {"ok": False, "detail": f"no answer within {DATABASE_CHECK_SECONDS:g} s"}


def test_worker_heartbeat_goes_stale():
    from django.core.cache import cache

    cache.delete(WORKER_HEARTBEAT_KEY)
    assert worker_health().ok is False
    worker_heartbeat_record(now=1_000.0)
    assert worker_health(now=1_060.0).ok is True
    assert worker_health(now=1_000.0 + 151).ok is False
