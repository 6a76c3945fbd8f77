"""A real Celery worker process consumes both queues through the configured broker."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.core.cache import cache

from apps.common.health import WORKER_HEARTBEAT_KEY
from apps.common.tasks import worker_heartbeat
from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture(scope="module")
def worker_process() -> Iterator[subprocess.Popen]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "quizsite.test_settings"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "quizsite",
            "worker",
            "--queues",
            "default,gpu",
            "--pool",
            "solo",
            "--loglevel",
            "INFO",
            "--hostname",
            f"test-{uuid.uuid4().hex[:8]}@%h",
            "--without-mingle",
            "--without-gossip",
        ],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    yield process
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


def test_task_on_default_queue_runs_in_the_worker(worker_process, api_client):
    cache.delete(WORKER_HEARTBEAT_KEY)
    assert api_client.get("/healthz").json()["worker"]["ok"] is False
    result = worker_heartbeat.apply_async(queue="default")
    assert result.get(timeout=90) == "ok", worker_process.stdout
    assert api_client.get("/healthz").json()["worker"]["ok"] is True


def test_task_on_gpu_queue_runs_in_the_worker(worker_process):
    assert worker_heartbeat.apply_async(queue="gpu").get(timeout=90) == "ok"


def test_celery_is_configured_for_json_and_both_queues():
    from quizsite.celery import app

    assert app.conf.accept_content == ["json"]
    assert app.conf.task_serializer == "json"
    assert app.conf.result_serializer == "json"
    assert {queue.name for queue in app.conf.task_queues} == {"default", "gpu"}
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in app.tasks
