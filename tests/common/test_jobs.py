"""One lifecycle for every kind of background job: claimed once, kept alive by its progress, finished once,
and handed over again by one round when the broker lost it or its worker stopped."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.common.jobs import (
    JobStatus,
    job_claim,
    job_finish,
    job_heartbeat,
    job_kinds,
    jobs_resume,
    jobs_stalled,
)
from apps.interchange.jobs import ANKI_HISTORY_IMPORTS
from apps.srs.jobs import PARAMETER_FITS, RESCHEDULES, RETENTION_ADVICE
from apps.srs.models import Reschedule

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(learner) -> Reschedule:
    return Reschedule.objects.create(learner=learner, reason="parameters")


def test_every_kind_is_registered_once_by_its_app():
    names = [kind.task_name for kind in job_kinds()]
    assert sorted(names) == sorted(
        kind.task_name for kind in (RESCHEDULES, PARAMETER_FITS, RETENTION_ADVICE, ANKI_HISTORY_IMPORTS)
    )


def test_a_job_is_claimed_once_and_a_finished_one_never_again(queued):
    now = timezone.now()
    claimed = job_claim(RESCHEDULES, queued.pk, now=now)
    assert claimed is not None and claimed.status == JobStatus.RUNNING and claimed.started_at == now
    # A second delivery while its worker is alive leaves it to that worker.
    assert job_claim(RESCHEDULES, queued.pk, now=now + timedelta(seconds=1)) is None
    job_finish(claimed, status=JobStatus.DONE, now=now)
    assert job_claim(RESCHEDULES, queued.pk, now=now + RESCHEDULES.stalled_after * 2) is None
    with pytest.raises(ValueError, match="done or failed"):
        job_finish(claimed, status=JobStatus.RUNNING, now=now)


def test_a_running_job_whose_heartbeat_stopped_is_taken_over_keeping_its_start(queued):
    start = timezone.now()
    claimed = job_claim(RESCHEDULES, queued.pk, now=start)
    job_heartbeat(claimed)
    beat = Reschedule.objects.get(pk=queued.pk).updated_at
    assert job_claim(RESCHEDULES, queued.pk, now=beat + RESCHEDULES.stalled_after - timedelta(seconds=1)) is None
    taken_over = job_claim(RESCHEDULES, queued.pk, now=beat + RESCHEDULES.stalled_after + timedelta(seconds=1))
    assert taken_over is not None and taken_over.started_at == start


def test_the_resume_round_hands_over_lost_and_stopped_jobs_of_every_kind_once_an_interval(queued, learner):
    now = queued.updated_at
    assert jobs_stalled(RESCHEDULES, now=now) == []
    later = now + RESCHEDULES.republish_after + timedelta(seconds=1)

    handed = jobs_resume(now=later)

    assert handed[RESCHEDULES.task_name] == 1
    assert set(handed) == {kind.task_name for kind in job_kinds()}
    # Handed over at `later`: the next round leaves it for another interval.
    assert jobs_resume(now=later)[RESCHEDULES.task_name] == 0
    assert Reschedule.objects.get(pk=queued.pk).updated_at == later
