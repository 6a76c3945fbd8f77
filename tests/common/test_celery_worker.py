"""A real Celery worker process consumes both queues through the configured broker."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache

from apps.common.health import WORKER_HEARTBEAT_KEY
from apps.common.tasks import worker_heartbeat
from tests.support.paths import REPO_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


class Worker:
    """A worker process whose output goes to a file: a pipe nobody reads fills up and stops the worker."""

    def __init__(self, process: subprocess.Popen[bytes], log: Path) -> None:
        self.process = process
        self.log = log

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-5000:]


@pytest.fixture(scope="module")
def worker_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "quizsite.test_settings"}
    log = tmp_path_factory.mktemp("celery-worker") / "worker.log"
    log_file = log.open("wb")
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
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )
    yield Worker(process, log)
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
    log_file.close()


def test_task_on_default_queue_runs_in_the_worker(worker_process, api_client):
    cache.delete(WORKER_HEARTBEAT_KEY)
    assert api_client.get("/healthz").json()["worker"]["ok"] is False
    result = worker_heartbeat.apply_async(queue="default")
    assert result.get(timeout=90) == "ok", worker_process.output()
    assert api_client.get("/healthz").json()["worker"]["ok"] is True


def test_task_on_gpu_queue_runs_in_the_worker(worker_process):
    assert worker_heartbeat.apply_async(queue="gpu").get(timeout=90) == "ok", worker_process.output()


def test_celery_is_configured_for_json_and_both_queues():
    from quizsite.celery import app

    assert app.conf.accept_content == ["json"]
    assert app.conf.task_serializer == "json"
    assert app.conf.result_serializer == "json"
    assert {queue.name for queue in app.conf.task_queues} == {"default", "gpu"}
    # What a worker does as it starts: import every installed app's tasks module.
    app.loader.import_default_modules()
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in app.tasks
