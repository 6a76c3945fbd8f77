"""Background jobs: work a worker does for a row, written once for every kind (gradings included).

A job's row is its record and its outbox. It is queued when created and handed to a worker by task name
once the transaction commits; `enqueued_at` records the last hand-off the broker took. A worker claims it
(one of the kind's running statuses, one attempt more, its `worker` name), saves progress as it goes (each
save is a heartbeat: `updated_at` moves), and finishes it (done or failed). Progress and the finish are
written only while the attempt that claimed the job still owns it, so a worker that was given up for dead
and comes back changes nothing.

A job the broker never took or lost, or whose worker stopped (its heartbeat is stale, or its process on
this machine is gone), is recovered by one round for every kind (`jobs_resume`): handed over again once
an interval, or failed once it has used the kind's attempts. Every worker runs the round on a timer and
beat runs it too; on PostgreSQL one process at a time does the work.

Each kind registers itself once (`job_kind_register`, from its app's ready()), saying its model, its
task and how long it may stay quiet.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.db import connection, models, transaction
from django.db.models import F, Q
from django.utils import timezone

from apps.common.publish import tasks_publish


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


JOB_FINISHED = (JobStatus.DONE, JobStatus.FAILED)
JOB_IN_FLIGHT = (JobStatus.QUEUED, JobStatus.RUNNING)
# What a failed job tells its owner when the failure was ours; the exception itself goes to the log.
JOB_FAILED_ON_OUR_SIDE = "Something went wrong on our side; it has been logged."
# The PostgreSQL advisory lock one resume round holds: "QUIZREAP" in ASCII, a number this database uses
# for nothing else.
RESUME_LOCK_KEY = 0x5155495A52454150


class BackgroundJob(models.Model):
    """The lifecycle every kind of background job shares; its rows are the kind's own."""

    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.QUEUED)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # While queued: when it last changed. While running: its heartbeat, moved by each progress save.
    updated_at = models.DateTimeField(auto_now=True)
    error_message = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # "host:pid" of the worker process that claimed it last; with updated_at, how a stopped worker is told.
    worker = models.CharField(max_length=200, blank=True)
    enqueued_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When it was last handed to the broker; empty until one hand-off works.",
    )
    publish_attempts = models.PositiveIntegerField(
        default=0, help_text="Hand-offs to the broker tried, failed ones included."
    )

    class Meta:
        abstract = True


@dataclass(frozen=True)
class JobKind:
    """How one kind of job is handed over, when it counts as stalled, and how often it is tried."""

    model: type[BackgroundJob]
    task_name: str
    # What the log calls these jobs ("reschedules").
    what: str
    # A running job whose heartbeat is older than this has lost its worker.
    stalled_after: timedelta
    # A queued job the broker never took (a failed hand-off) is handed over again once it is this old:
    # long enough not to race the hand-off of the request that queued it.
    republish_after: timedelta = timedelta(minutes=2)
    # A job the broker took this long ago and no worker claimed (or, stalled, took over) was lost with it
    # (a broker restarted without its data) and is handed over again.
    redeliver_after: timedelta = timedelta(minutes=10)
    # The most jobs of the kind one round hands over; the next round takes the rest.
    batch: int = 100
    # The field whose value the kind's task takes: the row's id, or (for a fit) the learner's.
    task_argument: str = "pk"
    # One short try at the broker; what it does not take stays queued for the next round.
    publish_timeout_seconds: float = 2.0
    # The statuses of a job a worker runs; a claim sets the first.
    running_statuses: tuple[str, ...] = (JobStatus.RUNNING,)
    # A stalled job that has been claimed this often is failed rather than handed over again.
    max_attempts: int | None = None
    # What such a job's owner is told; {attempts} is filled in.
    interrupted_message: str = (
        "It was interrupted {attempts} times (the worker running it stopped) and was not tried again."
    )


_KINDS: dict[str, JobKind] = {}


def job_kind_register(kind: JobKind) -> JobKind:
    """Make the kind known to `jobs_resume`; registering it again replaces it."""
    _KINDS[kind.task_name] = kind
    return kind


def job_kinds() -> list[JobKind]:
    return list(_KINDS.values())


def job_worker_name() -> str:
    """This process, as a job's `worker` records it."""
    return f"{socket.gethostname()}:{os.getpid()}"


def job_worker_gone(worker: str) -> bool:
    """Whether the process a job's `worker` names ran on this machine and is no longer there."""
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def job_stalled(kind: JobKind, job: BackgroundJob, *, now: datetime) -> bool:
    """A running job whose worker stopped: it no longer saves its progress, or its process is gone."""
    if job.status not in kind.running_statuses:
        return False
    return job.updated_at < now - kind.stalled_after or job_worker_gone(job.worker)


def job_claimable(kind: JobKind, job: BackgroundJob, *, now: datetime) -> bool:
    """Whether a worker may take this job now: it is queued, or running with a worker that has stopped.

    A finished job (a task delivered twice) and one another worker is running are left alone."""
    if job.status in JOB_FINISHED:
        return False
    return job.status == JobStatus.QUEUED or job_stalled(kind, job, now=now)


def job_attempts_used(kind: JobKind, job: BackgroundJob) -> bool:
    """A stalled job that has had all the claims its kind allows."""
    return kind.max_attempts is not None and job.status in kind.running_statuses and job.attempts >= kind.max_attempts


def job_start(
    kind: JobKind, job: BackgroundJob, *, now: datetime, worker: str | None = None, fields: tuple[str, ...] = ()
) -> None:
    """Mark a claimed job running as one attempt more, by this worker; a job taken over from a stopped
    worker keeps the time it first started."""
    job.status = kind.running_statuses[0]
    job.attempts += 1
    job.worker = worker or job_worker_name()
    if job.started_at is None:
        job.started_at = now
    job.save(update_fields=["status", "attempts", "worker", "started_at", "updated_at", *fields])


@contextmanager
def job_locked(kind: JobKind, job_id: int, *, related: tuple[str, ...] = ()) -> Iterator[Any]:
    """The job's row, locked for the rest of a transaction this opens; None when it is gone."""
    with transaction.atomic():
        rows = kind.model._default_manager.select_for_update(of=("self",) if related else ())
        yield rows.select_related(*related).filter(pk=job_id).first()


class Claim(models.TextChoices):
    """What a worker's claim on a job came to."""

    CLAIMED = "claimed"
    MISSING = "missing"
    FINISHED = "finished"
    # Another worker is running it and is alive.
    BUSY = "busy"
    # It had used its attempts: failed with the kind's interrupted message.
    FAILED = "failed"


def job_take(
    kind: JobKind, job: BackgroundJob | None, *, now: datetime, worker: str | None = None, fields: tuple[str, ...] = ()
) -> Claim:
    """Claim a job locked by job_locked, if a worker may take it; says what came of it."""
    if job is None:
        return Claim.MISSING
    if job.status in JOB_FINISHED:
        return Claim.FINISHED
    if not job_claimable(kind, job, now=now):
        return Claim.BUSY
    if job_attempts_used(kind, job):
        _job_fail_interrupted(kind, job, now=now)
        return Claim.FAILED
    job_start(kind, job, now=now, worker=worker, fields=fields)
    return Claim.CLAIMED


def job_claim(kind: JobKind, job_id: int, *, now: datetime, worker: str | None = None) -> Any:
    """Lock the job, and if a worker may take it, mark it running and return it; None otherwise.

    Kinds that need more before they start (other locks, inputs fixed at the start) build their claim
    from job_locked and job_take (or job_claimable and job_start)."""
    with job_locked(kind, job_id) as job:
        return job if job_take(kind, job, now=now, worker=worker) == Claim.CLAIMED else None


def _job_owned(kind: JobKind, job: BackgroundJob) -> models.QuerySet[Any]:
    return kind.model._default_manager.filter(pk=job.pk, attempts=job.attempts, status__in=kind.running_statuses)


def job_heartbeat(kind: JobKind, job: BackgroundJob, *, fields: tuple[str, ...] = ()) -> bool:
    """Save the job's progress (`fields`, as they are on `job`); saving it is what tells others its worker
    is alive. False, saving nothing, once this attempt no longer owns the job."""
    job.updated_at = timezone.now()
    values = {name: getattr(job, name) for name in ("updated_at", *fields)}
    return _job_owned(kind, job).update(**values) == 1


def job_finish(
    kind: JobKind,
    job: BackgroundJob,
    *,
    status: str,
    now: datetime,
    error: str = "",
    fields: tuple[str, ...] = (),
) -> bool:
    """The job's end: done, or failed with what its owner is told; `fields` are saved with it.

    False, writing nothing, when the attempt that ran it no longer owns it (another worker took it over
    or finished it)."""
    if status not in JOB_FINISHED:
        raise ValueError(f"a job finishes done or failed, not {status!r}")
    owned = _job_owned(kind, job)
    job.status = status
    job.error_message = error
    job.finished_at = now
    job.updated_at = now
    names = ("status", "error_message", "finished_at", "updated_at", *fields)
    return owned.update(**{name: getattr(job, name) for name in names}) == 1


def _job_fail_interrupted(kind: JobKind, job: BackgroundJob, *, now: datetime) -> None:
    job_finish(
        kind, job, status=JobStatus.FAILED, now=now, error=kind.interrupted_message.format(attempts=job.attempts)
    )


def jobs_publish(kind: JobKind, jobs: Sequence[tuple[int, Any]], *, now: datetime | None = None) -> int:
    """Hand jobs, as (row id, task argument) pairs, to the broker in order; returns how many went.

    Each one the broker took records the hand-off; the one it refused counts a try, and those after it
    were not tried. With the broker down this returns within the kind's publish timeout, having logged
    why: the rows are the outbox the next round works from."""
    if not jobs:
        return 0
    now = now or timezone.now()
    arguments = list(dict.fromkeys(argument for _, argument in jobs))
    sent = tasks_publish(kind.task_name, arguments, timeout=kind.publish_timeout_seconds, what=kind.what)
    rows = kind.model._default_manager
    handed = set(arguments[:sent])
    rows.filter(pk__in=[pk for pk, argument in jobs if argument in handed]).update(
        enqueued_at=now, publish_attempts=F("publish_attempts") + 1
    )
    if sent < len(arguments):
        refused = arguments[sent]
        rows.filter(pk__in=[pk for pk, argument in jobs if argument == refused]).update(
            publish_attempts=F("publish_attempts") + 1
        )
    return sent


def job_publish_after_commit(kind: JobKind, job: BackgroundJob) -> None:
    """Hand a new or re-queued job to a worker once the transaction commits (at once outside one).

    The row was written in that transaction and is the outbox: a worker never looks for a row that is
    not there yet, and a rolled-back row is never handed over."""
    transaction.on_commit(partial(jobs_publish, kind, [(job.pk, getattr(job, kind.task_argument))]), robust=True)


def jobs_stalled(kind: JobKind, *, now: datetime) -> list[tuple[int, Any]]:
    """The kind's jobs no worker is running and none has been handed since, as (row id, task argument):
    queued ones the broker never took or lost, running ones whose worker stopped. A selector: it writes
    nothing (jobs_recover hands them over and records it)."""
    rows = kind.model._default_manager
    host_prefix = f"{socket.gethostname()}:"
    queued = Q(status=JobStatus.QUEUED) & (
        Q(enqueued_at=None, updated_at__lt=now - kind.republish_after) | Q(enqueued_at__lt=now - kind.redeliver_after)
    )
    # Handed over since it stopped moving: not again until a redelivery interval has passed.
    not_handed_since = (
        Q(enqueued_at=None) | Q(enqueued_at__lte=F("updated_at")) | Q(enqueued_at__lt=now - kind.redeliver_after)
    )
    running = (
        Q(status__in=kind.running_statuses)
        & (Q(updated_at__lt=now - kind.stalled_after) | Q(worker__startswith=host_prefix))
        & not_handed_since
    )
    # The longest silent first.
    candidates = rows.filter(queued | running).order_by("updated_at", "pk")
    found: list[tuple[int, Any]] = []
    for job in candidates.only("pk", "status", "updated_at", "worker", kind.task_argument).iterator():
        if job.status == JobStatus.QUEUED or job_stalled(kind, job, now=now):
            found.append((job.pk, getattr(job, kind.task_argument)))
            if len(found) == kind.batch:
                break
    return found


@dataclass(frozen=True)
class Recovered:
    """What one round did for one kind."""

    handed_over: int
    failed: int


def jobs_recover(kind: JobKind, *, now: datetime) -> Recovered:
    """Hand the kind's stalled jobs over again, failing those that used their attempts."""
    to_hand: list[tuple[int, Any]] = []
    failed = 0
    for pk, argument in jobs_stalled(kind, now=now):
        with job_locked(kind, pk) as job:
            # Judged again under the lock: a worker may have claimed or finished it since.
            if job is None or not job_claimable(kind, job, now=now):
                continue
            if job_attempts_used(kind, job):
                _job_fail_interrupted(kind, job, now=now)
                failed += 1
                continue
        to_hand.append((pk, argument))
    return Recovered(handed_over=jobs_publish(kind, to_hand, now=now), failed=failed)


def jobs_resume(*, now: datetime | None = None) -> dict[str, Recovered] | None:
    """One round for every kind: what it recovered, by task name; None when another process's round
    is running (the round holds a PostgreSQL session lock)."""
    with _resuming_alone() as alone:
        if not alone:
            return None
        moment = now or timezone.now()
        return {kind.task_name: jobs_recover(kind, now=moment) for kind in job_kinds()}


@contextmanager
def _resuming_alone() -> Iterator[bool]:
    with connection.cursor() as cursor:
        # A session lock, not a transaction's: it is held while the round hands jobs to the broker after
        # its commits, and it goes with the session if the process dies.
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [RESUME_LOCK_KEY])
        row = cursor.fetchone()
    alone = bool(row and row[0])
    try:
        yield alone
    finally:
        if alone:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [RESUME_LOCK_KEY])
