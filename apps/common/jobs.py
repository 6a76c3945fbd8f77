"""Background jobs: work a worker does for a row, written once for every kind.

A job's row is its record and its outbox. It is queued when created and handed to a worker by task name
once the transaction commits; a worker claims it (running), saves progress as it goes (each save is a
heartbeat: `updated_at` moves), and finishes it (done or failed). A job the broker never delivered, or
whose worker died, is stalled: one periodic task (`jobs_resume`) hands every kind's stalled jobs over
again, and the worker that claims a stalled running job goes on with it.

Each kind registers itself once (`job_kind_register`, from its app's ready()), saying its model, its
task and how long it may stay quiet.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.db import models, transaction
from django.db.models import Q

from apps.common.publish import task_publish_after_commit, tasks_publish


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


JOB_FINISHED = (JobStatus.DONE, JobStatus.FAILED)
JOB_IN_FLIGHT = (JobStatus.QUEUED, JobStatus.RUNNING)
# What a failed job tells its owner when the failure was ours; the exception itself goes to the log.
JOB_FAILED_ON_OUR_SIDE = "Something went wrong on our side; it has been logged."


class BackgroundJob(models.Model):
    """The lifecycle every kind of background job shares; its rows are the kind's own."""

    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.QUEUED)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # While queued: when it was last handed over. While running: its heartbeat, moved by each progress save.
    updated_at = models.DateTimeField(auto_now=True)
    error_message = models.TextField(blank=True)

    class Meta:
        abstract = True


Job = TypeVar("Job", bound=BackgroundJob)


@dataclass(frozen=True)
class JobKind:
    """How one kind of job is handed over and when it counts as stalled."""

    model: type[BackgroundJob]
    task_name: str
    # What the log calls these jobs ("reschedules").
    what: str
    # A running job whose heartbeat is older than this has lost its worker.
    stalled_after: timedelta
    # A queued job handed over this long ago and still not taken is handed over again.
    republish_after: timedelta = timedelta(minutes=2)
    # The most jobs of the kind one resume round hands over; the next round takes the rest.
    batch: int = 100
    # The field whose value the kind's task takes: the row's id, or (for a fit) the learner's.
    task_argument: str = "pk"
    # One short try at the broker; what it does not take stays queued for the next round.
    publish_timeout_seconds: float = 2.0


_KINDS: dict[str, JobKind] = {}


def job_kind_register(kind: JobKind) -> JobKind:
    """Make the kind known to `jobs_resume`; registering it again replaces it."""
    _KINDS[kind.task_name] = kind
    return kind


def job_kinds() -> list[JobKind]:
    return list(_KINDS.values())


def job_stalled(kind: JobKind, job: BackgroundJob, *, now: datetime) -> bool:
    """A running job whose worker has stopped saving its progress."""
    return job.status == JobStatus.RUNNING and job.updated_at < now - kind.stalled_after


def job_claimable(kind: JobKind, job: BackgroundJob, *, now: datetime) -> bool:
    """Whether a worker may take this job now: it is queued, or running with a worker that has stopped.

    A finished job (a task delivered twice) and one another worker is running are left alone."""
    if job.status in JOB_FINISHED:
        return False
    return job.status == JobStatus.QUEUED or job_stalled(kind, job, now=now)


def job_start(job: BackgroundJob, *, now: datetime, fields: tuple[str, ...] = ()) -> None:
    """Mark a claimed job running; a job taken over from a stopped worker keeps the time it first started."""
    job.status = JobStatus.RUNNING
    if job.started_at is None:
        job.started_at = now
    job.save(update_fields=["status", "started_at", "updated_at", *fields])


@contextmanager
def job_locked(kind: JobKind, job_id: int) -> Iterator[Any]:
    """The job's row, locked for the rest of a transaction this opens; None when it is gone."""
    with transaction.atomic():
        yield kind.model._default_manager.select_for_update().filter(pk=job_id).first()


def job_claim(kind: JobKind, job_id: int, *, now: datetime) -> Any:
    """Lock the job, and if a worker may take it, mark it running and return it; None otherwise.

    Kinds that need more before they start (other locks, inputs fixed at the start) build their claim
    from job_locked, job_claimable and job_start."""
    with job_locked(kind, job_id) as job:
        if job is None or not job_claimable(kind, job, now=now):
            return None
        job_start(job, now=now)
        return job


def job_heartbeat(job: BackgroundJob, *, fields: tuple[str, ...] = ()) -> None:
    """Save the job's progress; saving it is what tells others its worker is alive."""
    job.save(update_fields=[*fields, "updated_at"])


def job_finish(
    job: BackgroundJob, *, status: str, now: datetime, error: str = "", fields: tuple[str, ...] = ()
) -> None:
    """The job's end: done, or failed with what its owner is told; `fields` are saved with it."""
    if status not in JOB_FINISHED:
        raise ValueError(f"a job finishes done or failed, not {status!r}")
    job.status = status
    job.error_message = error
    job.finished_at = now
    job.save(update_fields=["status", "error_message", "finished_at", "updated_at", *fields])


def jobs_stalled(kind: JobKind, *, now: datetime) -> list[Any]:
    """The kind's jobs no worker is running, as the values its task takes: queued and not taken since
    they were last handed over, or running with a worker that stopped.

    Each queued one returned is marked as handed over now, so the next round leaves it alone for
    another interval; a stalled running one keeps its time (the worker that takes it over tells it
    from a live one by that) and is handed over each round until a worker takes it."""
    stalled = Q(status=JobStatus.QUEUED, updated_at__lt=now - kind.republish_after) | Q(
        status=JobStatus.RUNNING, updated_at__lt=now - kind.stalled_after
    )
    with transaction.atomic():
        rows = list(
            kind.model._default_manager.select_for_update(skip_locked=True)
            .filter(stalled)
            .order_by("pk")
            .values_list("pk", kind.task_argument)[: kind.batch]
        )
        handed_again = [pk for pk, _ in rows]
        kind.model._default_manager.filter(pk__in=handed_again, status=JobStatus.QUEUED).update(updated_at=now)
    return list(dict.fromkeys(argument for _, argument in rows))


def job_publish_after_commit(kind: JobKind, job: BackgroundJob) -> None:
    """Hand a new or re-queued job to a worker once the transaction commits."""
    task_publish_after_commit(
        kind.task_name, getattr(job, kind.task_argument), timeout=kind.publish_timeout_seconds, what=kind.what
    )


def jobs_resume(*, now: datetime) -> dict[str, int]:
    """Hand every kind's stalled jobs over again; how many of each kind, by task name."""
    handed: dict[str, int] = {}
    for kind in job_kinds():
        stalled = jobs_stalled(kind, now=now)
        if stalled:
            tasks_publish(kind.task_name, stalled, timeout=kind.publish_timeout_seconds, what=kind.what)
        handed[kind.task_name] = len(stalled)
    return handed
