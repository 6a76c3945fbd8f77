"""/healthz reports the database, the broker and the workers."""

from __future__ import annotations

import pytest

from apps.common.health import WORKER_HEARTBEAT_KEY, worker_health, worker_heartbeat_record
from quizsite.celery import app as celery_app

pytestmark = pytest.mark.django_db


def test_healthy_service(api_client):
    response = api_client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert body["broker"]["ok"] is True


def test_unreachable_broker_is_503(api_client):
    original = celery_app.conf.broker_url
    # Port 9 (discard) on loopback: nothing listens there, so the connection is refused at once.
    celery_app.conf.broker_url = "redis://127.0.0.1:9/0"
    try:
        response = api_client.get("/healthz")
    finally:
        celery_app.conf.broker_url = original
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"
    assert response.json()["broker"]["ok"] is False


def test_worker_heartbeat_goes_stale():
    from django.core.cache import cache

    cache.delete(WORKER_HEARTBEAT_KEY)
    assert worker_health().ok is False
    worker_heartbeat_record(now=1_000.0)
    assert worker_health(now=1_060.0).ok is True
    assert worker_health(now=1_000.0 + 151).ok is False
