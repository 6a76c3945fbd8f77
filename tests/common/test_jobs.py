"""One lifecycle for every kind of background job: claimed once, kept alive by its progress, finished once
by the attempt that owns it, and handed over again by one round when the broker lost it or its worker
stopped, or failed once it has used its attempts."""

from __future__ import annotations

import dataclasses
import socket
import subprocess
import sys
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from apps.common.jobs import (
    RESUME_LOCK_KEY,
    Claim,
    JobStatus,
    job_claim,
    job_finish,
    job_heartbeat,
    job_kinds,
    job_locked,
    job_take,
    jobs_recover,
    jobs_resume,
    jobs_stalled,
)
from apps.exercises.jobs import GRADINGS
from apps.interchange.jobs import ANKI_HISTORY_IMPORTS
from apps.srs.jobs import COURSE_MODELS, PARAMETER_FITS, RESCHEDULES, RETENTION_ADVICE
from apps.srs.models import Reschedule

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(learner) -> Reschedule:
    return Reschedule.objects.create(learner=learner, reason="parameters")


def dead_worker() -> str:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return f"{socket.gethostname()}:{process.pid}"


def test_every_kind_is_registered_once_by_its_app():
    names = [kind.task_name for kind in job_kinds()]
    assert sorted(names) == sorted(
        kind.task_name
        for kind in (GRADINGS, RESCHEDULES, PARAMETER_FITS, RETENTION_ADVICE, ANKI_HISTORY_IMPORTS, COURSE_MODELS)
    )


def test_a_job_is_claimed_once_and_a_finished_one_never_again(queued):
    now = timezone.now()
    claimed = job_claim(RESCHEDULES, queued.pk, now=now, worker="host-a:1")
    assert claimed is not None and claimed.status == JobStatus.RUNNING and claimed.started_at == now
    assert (claimed.attempts, claimed.worker) == (1, "host-a:1")
    # A second delivery while its worker is alive leaves it to that worker.
    assert job_claim(RESCHEDULES, queued.pk, now=now + timedelta(seconds=1)) is None
    assert job_finish(RESCHEDULES, claimed, status=JobStatus.DONE, now=now)
    assert job_claim(RESCHEDULES, queued.pk, now=now + RESCHEDULES.stalled_after * 2) is None
    with pytest.raises(ValueError, match="done or failed"):
        job_finish(RESCHEDULES, claimed, status=JobStatus.RUNNING, now=now)


def test_a_running_job_whose_heartbeat_stopped_is_taken_over_keeping_its_start(queued):
    start = timezone.now()
    claimed = job_claim(RESCHEDULES, queued.pk, now=start)
    assert job_heartbeat(RESCHEDULES, claimed)
    beat = Reschedule.objects.get(pk=queued.pk).updated_at
    assert job_claim(RESCHEDULES, queued.pk, now=beat + RESCHEDULES.stalled_after - timedelta(seconds=1)) is None
    taken_over = job_claim(RESCHEDULES, queued.pk, now=beat + RESCHEDULES.stalled_after + timedelta(seconds=1))
    assert taken_over is not None and taken_over.started_at == start and taken_over.attempts == 2


def test_the_attempt_that_lost_the_job_writes_nothing(queued):
    start = timezone.now()
    first = job_claim(RESCHEDULES, queued.pk, now=start)
    Reschedule.objects.filter(pk=queued.pk).update(updated_at=start - RESCHEDULES.stalled_after * 2)
    second = job_claim(RESCHEDULES, queued.pk, now=start)
    assert second is not None and second.attempts == 2
    first.cards_examined = 99
    # The first worker comes back: its progress and its finish no longer count.
    assert not job_heartbeat(RESCHEDULES, first, fields=("cards_examined",))
    assert not job_finish(RESCHEDULES, first, status=JobStatus.FAILED, now=start, error="late")
    row = Reschedule.objects.get(pk=queued.pk)
    assert (row.status, row.cards_examined, row.error_message) == (JobStatus.RUNNING, 0, "")
    assert job_finish(RESCHEDULES, second, status=JobStatus.DONE, now=start)
    assert Reschedule.objects.get(pk=queued.pk).status == JobStatus.DONE


def test_a_job_whose_worker_process_is_gone_is_stalled_at_once_however_fresh_its_heartbeat(queued):
    now = timezone.now()
    claimed = job_claim(RESCHEDULES, queued.pk, now=now, worker=dead_worker())
    assert claimed is not None
    assert jobs_stalled(RESCHEDULES, now=now) == [(queued.pk, queued.pk)]
    taken_over = job_claim(RESCHEDULES, queued.pk, now=now)
    assert taken_over is not None and taken_over.attempts == 2
    # A live worker of this machine (this process) keeps its job.
    assert jobs_stalled(RESCHEDULES, now=now) == []


def test_a_stalled_job_that_used_its_attempts_fails_with_the_kinds_message(queued):
    kind = dataclasses.replace(RESCHEDULES, max_attempts=2)
    now = timezone.now()
    Reschedule.objects.filter(pk=queued.pk).update(
        status=JobStatus.RUNNING, attempts=2, worker="another-host:1", updated_at=now - kind.stalled_after * 2
    )
    with job_locked(kind, queued.pk) as row:
        assert job_take(kind, row, now=now) == Claim.FAILED
    row = Reschedule.objects.get(pk=queued.pk)
    assert row.status == JobStatus.FAILED and "interrupted 2 times" in row.error_message
    with job_locked(kind, queued.pk) as row:
        assert job_take(kind, row, now=now) == Claim.FINISHED
    with job_locked(kind, queued.pk + 1000) as row:
        assert job_take(kind, row, now=now) == Claim.MISSING


def test_the_round_fails_exhausted_jobs_and_hands_over_stopped_ones_once_an_interval(learner, django_user_model):
    kind = dataclasses.replace(RESCHEDULES, max_attempts=2)
    now = timezone.now()
    stale = now - kind.stalled_after * 2
    stopped, exhausted, alive = (
        Reschedule.objects.create(learner=other, reason="parameters")
        for other in (learner, *(django_user_model.objects.create_user(username=name) for name in ("bo", "cy")))
    )
    Reschedule.objects.filter(pk=stopped.pk).update(
        status=JobStatus.RUNNING, attempts=1, worker="another-host:1", updated_at=stale
    )
    Reschedule.objects.filter(pk=exhausted.pk).update(
        status=JobStatus.RUNNING, attempts=2, worker="another-host:1", updated_at=stale
    )
    Reschedule.objects.filter(pk=alive.pk).update(
        status=JobStatus.RUNNING, attempts=1, worker="another-host:1", updated_at=now
    )

    recovered = jobs_recover(kind, now=now)

    assert (recovered.handed_over, recovered.failed) == (1, 1)
    statuses = dict(Reschedule.objects.values_list("pk", "status"))
    assert statuses == {stopped.pk: JobStatus.RUNNING, exhausted.pk: JobStatus.FAILED, alive.pk: JobStatus.RUNNING}
    # Handed over since it stopped: the next rounds leave it to the worker that takes it, until the
    # message could have been lost.
    assert jobs_recover(kind, now=now).handed_over == 0
    later = now + kind.redeliver_after + timedelta(seconds=1)
    # By then the live one has been silent as long: both are due.
    assert [pk for pk, _ in jobs_stalled(kind, now=later)] == [stopped.pk, alive.pk]


def test_the_resume_round_hands_over_lost_and_stopped_jobs_of_every_kind_once_an_interval(queued, learner):
    now = queued.updated_at
    assert jobs_stalled(RESCHEDULES, now=now) == []
    later = now + RESCHEDULES.republish_after + timedelta(seconds=1)

    recovered = jobs_resume(now=later)

    assert recovered is not None and recovered[RESCHEDULES.task_name].handed_over == 1
    assert set(recovered) == {kind.task_name for kind in job_kinds()}
    row = Reschedule.objects.get(pk=queued.pk)
    assert row.enqueued_at == later and row.publish_attempts == 1
    # Handed over at `later`: the next round leaves it for another interval.
    again = jobs_resume(now=later)
    assert again is not None and again[RESCHEDULES.task_name].handed_over == 0


def test_one_resume_round_at_a_time():
    """While one process runs the round, another's returns at once without doing anything."""
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [RESUME_LOCK_KEY])
            assert cursor.fetchone()[0] is True
        assert jobs_resume() is None
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [RESUME_LOCK_KEY])
        recovered = jobs_resume()
        assert recovered is not None and set(recovered) == {kind.task_name for kind in job_kinds()}
    finally:
        other.close()
