"""Gradings survive a broker that is down when the code is submitted and a worker killed whole
mid-grade, with beat running or not: each submission is graded exactly once.

The grading tests each have their own redis-server as broker and start real worker (and beat)
processes on it, with short limits from their environment: stale after 6 s, a resume round every 3 s."""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.utils import timezone

from apps.common.jobs import jobs_publish, jobs_recover
from apps.content.models import PipelineExercise
from apps.exercises.jobs import GRADINGS
from apps.exercises.models import IN_PROGRESS, Submission, SubmissionStatus
from quizsite.celery import app as celery_app
from tests.support.grading import SIMULATOR, pipeline_after, reference, requires_sandbox
from tests.support.paths import REPO_ROOT
from tests.support.processes import RedisServer, redis_server, wait_until, worker_database_url

pytestmark = pytest.mark.django_db(transaction=True)


def live(test: Callable[..., None]) -> Callable[..., None]:
    """Marks a test that starts workers which grade in real sandboxes."""
    return pytest.mark.integration(pytest.mark.grader(requires_sandbox(test)))


URL = f"/api/v1/exercises/{SIMULATOR.slug}/submissions/"
STALE_SECONDS = 6
RESUME_SECONDS = 3
# What a grading of the simulator exercise, a worker's start with its warm sandbox, and such, may take
# at most on a loaded machine: deadlines for waiting, not measured figures.
GRADING_DEADLINE = 120.0
START_DEADLINE = 90.0


@pytest.fixture
def broker() -> Iterator[RedisServer]:
    """A private redis-server as broker and result backend, for this process's hand-offs and the workers'."""
    with redis_server() as server:
        conf = celery_app.conf
        saved = conf.broker_url, conf.result_backend
        conf.broker_url = conf.result_backend = server.url
        try:
            yield server
        finally:
            conf.broker_url, conf.result_backend = saved


class Service:
    """A Celery worker or beat process in its own process group, logging to a file."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        self._log_file = log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "quizsite", *argv],
            cwd=REPO_ROOT,
            env=env,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for_line(self, pattern: str, *, timeout: float, count: int = 1) -> None:
        def seen() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"{self.log.name} exited with {self.process.returncode}:\n{self.output()[-3000:]}")
            return len(re.findall(pattern, self.output())) >= count

        wait_until(seen, timeout=timeout, interval=0.1, what=f"{pattern!r} in {self.log.name}")

    def kill_group(self) -> None:
        """SIGKILL the whole group, main process and pool processes at once, as a lost machine would."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self._log_file.close()


@pytest.fixture
def services(broker: RedisServer, tmp_path: Path) -> Iterator[Callable[..., Service]]:
    """Starts workers and beat on the private broker; whatever is still running at the end is stopped."""
    started: list[Service] = []
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "quizsite.test_settings",
        "DATABASE_URL": worker_database_url(),
        "REDIS_URL": broker.url,
        "CELERY_BROKER_URL": broker.url,
        "CELERY_RESULT_BACKEND": broker.url,
        "GRADER_WARM_ON_START": "true",
        # Checks only: what is graded matters here, not how fast it runs.
        "GRADER_TIMING_ROUNDS": "0",
        "SUBMISSION_STALE_SECONDS": str(STALE_SECONDS),
        "JOBS_RESUME_SECONDS": str(RESUME_SECONDS),
        "SUBMISSION_QUEUED_REPUBLISH_SECONDS": "1",
    }

    def start(kind: str, *, queues: str = "gpu") -> Service:
        name = f"{kind}-{len(started)}"
        if kind == "beat":
            argv = ["beat", "--loglevel", "INFO"]
        else:
            argv = [
                "worker", "--queues", queues, "--pool", "prefork", "--concurrency", "1",
                "--hostname", f"{name}-{uuid.uuid4().hex[:8]}@%h",
                "--without-mingle", "--without-gossip", "--loglevel", "INFO",
            ]  # fmt: skip
        service = Service(argv, env, tmp_path / f"{name}.log")
        started.append(service)
        return service

    try:
        yield start
    finally:
        for service in reversed(started):
            service.stop()


def submit(client, code: str) -> Submission:
    response = client.post(URL, {"code": code}, format="json")
    assert response.status_code == 202, response.content
    return Submission.objects.get(pk=response.json()["id"])


def wait_for_status(submission: Submission, statuses: set[str], *, timeout: float) -> Submission:
    seen: list[str] = []

    def reached() -> bool:
        submission.refresh_from_db()
        seen.append(submission.status)
        return submission.status in statuses

    try:
        wait_until(reached, timeout=timeout, interval=0.1, what=f"status in {sorted(statuses)}")
    except AssertionError as error:
        raise AssertionError(f"{error}; statuses seen: {seen[-10:]}") from None
    return submission


def assert_a_late_copy_changes_nothing(submission: Submission, worker: Service) -> None:
    """A copy of the task that arrives after the grading finished, as the broker redelivers the dead
    worker's message after its visibility timeout, finds it finished."""
    submission.refresh_from_db()
    before = (submission.attempts, submission.finished_at, submission.result, submission.status)
    finished_copies = worker.output().count("'finished'")
    assert jobs_publish(GRADINGS, [(submission.pk, submission.pk)]) == 1
    worker.wait_for_line(r"succeeded in [0-9.]+s: 'finished'", timeout=30, count=finished_copies + 1)
    submission.refresh_from_db()
    assert (submission.attempts, submission.finished_at, submission.result, submission.status) == before


def kill_mid_grade_and_recover(
    client, start: Callable[..., Service], *, worker_queues: str
) -> tuple[Submission, Service]:
    first = start("worker", queues=worker_queues)
    submission = submit(client, pipeline_after("import time\ntime.sleep(2)"))
    wait_for_status(submission, {"checking", "timing"}, timeout=START_DEADLINE + GRADING_DEADLINE)
    first.kill_group()
    submission.refresh_from_db()
    assert submission.status in IN_PROGRESS and submission.attempts == 1, submission.status

    second = start("worker", queues=worker_queues)
    second.wait_for_line(r"ready\.", timeout=START_DEADLINE)
    # Handed over by a resume round once its heartbeat went stale (at once if its process is seen gone)
    # and taken over by the idle worker.
    wait_until(
        lambda: Submission.objects.get(pk=submission.pk).attempts == 2,
        timeout=STALE_SECONDS + RESUME_SECONDS + GRADING_DEADLINE,
        what="the grading taken over",
    )

    wait_for_status(submission, {"done", "failed"}, timeout=GRADING_DEADLINE)
    assert submission.status == SubmissionStatus.DONE, submission.error_message
    assert submission.verdict == "accepted" and submission.attempts == 2
    assert submission.result is not None and submission.score == submission.result["score"]["total"]
    # Celery logs the task's result after the task returns, so after the row says done.
    second.wait_for_line(r"'graded'", timeout=30)
    assert second.output().count("'graded'") == 1
    return submission, second


@live
def test_a_worker_killed_whole_mid_grade_is_graded_once_by_the_next_worker_without_beat(
    learner_client, shipped_course, services
):
    submission, worker = kill_mid_grade_and_recover(learner_client, services, worker_queues="gpu")
    assert f"Resumed background jobs: {{'{GRADINGS.task_name}': Recovered(handed_over=1, failed=0)}}" in worker.output()
    assert_a_late_copy_changes_nothing(submission, worker)


@live
def test_a_worker_killed_whole_mid_grade_is_graded_once_with_beat_resuming_too(
    learner_client, shipped_course, services
):
    beat = services("beat")
    # This worker also takes the default queue, where beat sends its resume rounds.
    submission, worker = kill_mid_grade_and_recover(learner_client, services, worker_queues="gpu,default")
    worker.wait_for_line(r"apps\.common\.tasks\.jobs_resume\[[-0-9a-f]+\] succeeded", timeout=30)
    assert "Sending due task jobs-resume" in beat.output()
    assert_a_late_copy_changes_nothing(submission, worker)


@live
def test_a_submission_sent_while_the_broker_is_down_is_stored_and_graded_once_it_is_back(
    learner_client, shipped_course, broker, services
):
    # A first request pays for loading what requests use (URLs, the API's modules), whatever the broker.
    assert learner_client.get("/api/v1/submissions/").status_code == 200
    broker.stop()
    response = learner_client.post(URL, {"code": reference(SIMULATOR, "expert")}, format="json")
    assert response.status_code == 202, response.content
    submission = Submission.objects.get(pk=response.json()["id"])
    assert submission.status == SubmissionStatus.QUEUED
    assert submission.enqueued_at is None and submission.publish_attempts == 1

    broker.start()
    worker = services("worker")
    wait_for_status(submission, {"done", "failed"}, timeout=START_DEADLINE + GRADING_DEADLINE)
    assert submission.status == SubmissionStatus.DONE, submission.error_message
    assert submission.verdict == "accepted" and submission.attempts == 1
    # Sent again by the worker's resume round, once.
    assert submission.enqueued_at is not None and submission.publish_attempts == 2
    assert f"Resumed background jobs: {{'{GRADINGS.task_name}': Recovered(handed_over=1, failed=0)}}" in worker.output()
    assert_a_late_copy_changes_nothing(submission, worker)


def test_the_resume_round_sends_again_what_the_broker_never_took_or_lost(learner, shipped_course, broker):
    exercise = PipelineExercise.objects.get(slug=SIMULATOR.slug)
    now = timezone.now()
    kind = dataclasses.replace(GRADINGS, republish_after=timedelta(seconds=30), redeliver_after=timedelta(seconds=600))

    def queued(*, age: float, enqueued_age: float | None) -> int:
        submission = Submission.objects.create(learner=learner, exercise=exercise, code="x = 1\n")
        Submission.objects.filter(pk=submission.pk).update(
            created_at=now - timedelta(seconds=age),
            updated_at=now - timedelta(seconds=age),
            enqueued_at=None if enqueued_age is None else now - timedelta(seconds=enqueued_age),
        )
        return submission.pk

    just_stored = queued(age=5, enqueued_age=None)
    never_taken = queued(age=40, enqueued_age=None)
    waiting = queued(age=400, enqueued_age=400)
    lost = queued(age=700, enqueued_age=650)

    broker.stop()
    assert jobs_recover(kind, now=now).handed_over == 0
    rows = {row.pk: row for row in Submission.objects.all()}
    # One attempt, on the oldest that was due; the broker down, the rest wait for the next round.
    assert rows[lost].publish_attempts == 1 and rows[lost].enqueued_at == now - timedelta(seconds=650)
    assert rows[never_taken].publish_attempts == 0

    broker.start()
    assert jobs_recover(kind, now=now).handed_over == 2
    assert redis.Redis.from_url(broker.url).llen(settings.GRADING_QUEUE) == 2

    rows = {row.pk: row for row in Submission.objects.all()}
    assert rows[lost].publish_attempts == 2 and rows[never_taken].publish_attempts == 1
    for handed_over in (rows[lost], rows[never_taken]):
        assert handed_over.enqueued_at == now
    assert rows[just_stored].publish_attempts == rows[waiting].publish_attempts == 0
    assert rows[just_stored].enqueued_at is None
    assert {row.status for row in rows.values()} == {SubmissionStatus.QUEUED}
