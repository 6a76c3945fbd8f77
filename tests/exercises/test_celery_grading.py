"""Through the API to a real Celery worker process on the configured broker: a submission is
graded in a sandbox, and a worker process killed mid-grade leaves it graded by the next one."""

from __future__ import annotations

import os
import signal
import time

import pytest

from apps.exercises.models import Submission
from tests.support.grading import SIMULATOR, pipeline_after, reference, requires_sandbox

pytestmark = [pytest.mark.integration, pytest.mark.grader, requires_sandbox, pytest.mark.django_db(transaction=True)]

URL = f"/api/v1/exercises/{SIMULATOR.slug}/submissions/"


def wait_for(client, url: str, done, timeout: float = 240.0) -> dict:
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        body = client.get(url).json()
        seen.append((body["status"], body["progress"]))
        if done(body):
            return body
        time.sleep(0.3)
    raise AssertionError(f"timed out; statuses seen: {seen[-20:]}")


def test_a_submission_is_graded_by_the_worker_with_progress(grading_worker, learner_client):
    created = learner_client.post(URL, {"code": reference(SIMULATOR, "expert")}, format="json")
    assert created.status_code == 202, created.content
    url = created.json()["url"]
    statuses: list[str] = []
    seen: list[dict] = []

    def finished(body: dict) -> bool:
        statuses.append(body["status"])
        seen.append(body)
        return body["status"] in {"done", "failed"}

    body = wait_for(learner_client, url, finished)
    assert body["status"] == "done", body
    assert body["verdict"] == "accepted" and body["attempts"] == 1 and body["progress"] == 1.0
    assert body["result"]["timing"]["rewrites_off"] is True
    assert body["result"]["speedup"]["vs_naive"] > 0
    # Progress was visible on the way: statuses only move forward.
    order = ["queued", "running", "checking", "timing", "done"]
    assert [order.index(status) for status in statuses] == sorted(order.index(status) for status in statuses)
    assert {"checking", "timing"} & set(statuses), statuses
    # The bar never goes back, and each phase says what it is doing, with its counts.
    progress = [body["progress"] for body in seen]
    assert progress == sorted(progress), progress
    phases = [body["phase"] for body in seen]
    assert all(phase["name"] == body["status"] and phase["label"] for phase, body in zip(phases, seen, strict=True))
    counted = [phase for phase in phases if phase["name"] in {"checking", "timing"} and phase["total"]]
    assert counted, phases
    assert all(0 <= phase["done"] <= phase["total"] for phase in counted), counted
    assert phases[-1] == {"name": "done", "label": "Graded", "done": None, "total": None, "seconds_left": None}


def test_a_worker_process_killed_mid_grade_leaves_the_submission_graded_again(grading_worker, learner_client):
    code = pipeline_after("import time\ntime.sleep(4)")
    url = learner_client.post(URL, {"code": code}, format="json").json()["url"]
    body = wait_for(learner_client, url, lambda body: body["status"] in {"running", "checking"})
    worker = Submission.objects.get(pk=body["id"]).worker
    pid = int(worker.rpartition(":")[2])
    assert pid != grading_worker.pid
    os.kill(pid, signal.SIGKILL)

    body = wait_for(learner_client, url, lambda body: body["status"] in {"done", "failed"})
    assert body["status"] == "done", body
    assert body["attempts"] == 2 and body["verdict"] == "accepted"
    assert Submission.objects.get(pk=body["id"]).worker != worker
