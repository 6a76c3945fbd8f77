"""Rescheduling a learner's review cards when their memory model or desired retention changes.

A change of FSRS parameters or desired retention changes the interval every review card should
have, as does a course memory model newly in use (apps.srs.adaptation.course_models): a card of
that course moves under the course's weights and its own factor. As Anki's "reschedule cards on
change" does, each card in the review stage gets the due date its stored memory state gives under
the new settings (`due_under`): its last review plus the interval of its stability, fuzzed as the
review that left it there was, unless its due date is already one fuzz allows. Stabilities are not
recomputed from the history: past reviews keep the settings they were made with, so replays stay
exact.

The run is a row (the outbox) and a background task; it goes through the learner's cards in
batches, each inside the learner's review turn, so a review recorded meanwhile is never
overwritten: its card is read after it, and moved from its new state or left out once it is no
longer in the review stage.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Q
from django.utils import timezone

from apps.common.jobs import (
    JOB_FAILED_ON_OUR_SIDE,
    JobStatus,
    job_claimable,
    job_finish,
    job_heartbeat,
    job_start,
    jobs_publish,
)
from apps.srs.core.population import CardConfigs
from apps.srs.core.scheduling import MemoryStage, MemoryState, SchedulerConfig, fuzz_range, rescheduled_due
from apps.srs.jobs import RESCHEDULES
from apps.srs.models import CardMemory, Reschedule, SchedulerProfile, SchedulingSettings
from apps.srs.reviews.memory import memory_state_of
from apps.srs.reviews.services import SyncInProgress, learner_turn
from apps.srs.settings.config import scheduler_config_from_json, scheduler_config_from_settings
from apps.srs.settings.memory_models import card_configs_get
from apps.srs.settings.rules import scheduling_settings_in_force
from apps.srs.settings.services import scheduler_profile_ensure

logger = logging.getLogger(__name__)

# Cards per batch: a batch holds the learner's review turn, and 500 cards take tens of milliseconds,
# far below the REVIEW_SYNC_LOCK_WAIT_SECONDS a review waits for its turn.
RESCHEDULE_BATCH = 500
# A batch kept waiting for the learner's turn is tried again this many times before the run fails.
_BATCH_ATTEMPTS = 3


def reschedule_latest_get(*, learner: Any) -> Reschedule | None:
    """The learner's latest reschedule, whatever its status; None when their cards were never rescheduled."""
    return Reschedule.objects.filter(learner=learner).order_by("-created_at", "-pk").first()


def reschedule_run(*, reschedule_id: int) -> Reschedule | None:
    """Run a queued reschedule to its end, batch by batch; None when there is nothing to do.

    Nothing to do: the run is finished (a task delivered twice), another worker is running it, or
    another run of the learner's is in progress (this one stays queued and starts after it).
    Running it again changes nothing: the due dates it computes are those it already set.
    """
    try:
        claimed = _claim(reschedule_id)
    except SyncInProgress:
        # Reviews kept the learner's turn: the run stays queued, and jobs_resume hands it over again.
        return None
    if claimed is None:
        return None
    row, configs = claimed
    try:
        while _batch_reschedule(row, configs=configs):
            pass
    except Exception:
        logger.exception("Reschedule %s failed", reschedule_id)
        job_finish(RESCHEDULES, row, status=JobStatus.FAILED, now=timezone.now(), error=JOB_FAILED_ON_OUR_SIDE)
    else:
        job_finish(RESCHEDULES, row, status=JobStatus.DONE, now=timezone.now())
    waiting = (
        Reschedule.objects.filter(learner_id=row.learner_id, status=JobStatus.QUEUED)
        .values_list("pk", flat=True)
        .first()
    )
    if waiting is not None:
        jobs_publish(RESCHEDULES, [(waiting, waiting)], now=timezone.now())
    return row


def _claim(reschedule_id: int) -> tuple[Reschedule, CardConfigs] | None:
    """Mark the run running and fix the settings it computes with; None when it is not this worker's to run."""
    learner_id = Reschedule.objects.filter(pk=reschedule_id).values_list("learner_id", flat=True).first()
    if learner_id is None:
        return None
    now = timezone.now()
    # In the learner's turn, as reviews take it: they store the profile of the settings in force and
    # point the settings row at it, so taking both the other way round could deadlock with them.
    with learner_turn(learner_id=learner_id):
        # Then the settings row: a change being saved holds it, so the run starts with that change in
        # force, and the change, finding this run no longer queued, queues the next one.
        settings = SchedulingSettings.objects.select_for_update().filter(learner_id=learner_id).first()
        row = Reschedule.objects.select_for_update().filter(pk=reschedule_id).first()
        if row is None or not job_claimable(RESCHEDULES, row, now=now):
            return None
        if row.status == JobStatus.RUNNING and row.to_profile_id is not None:
            # A run whose worker died goes on with the settings it started with; a later change queued another.
            profile = SchedulerProfile.objects.get(pk=row.to_profile_id)
            config = scheduler_config_from_json(profile.config)
        else:
            running = Reschedule.objects.filter(
                ~Q(pk=row.pk),
                learner_id=learner_id,
                status=JobStatus.RUNNING,
                updated_at__gte=now - RESCHEDULES.stalled_after,
            )
            if running.exists():
                return None
            in_force = scheduling_settings_in_force(settings or SchedulingSettings(learner_id=learner_id))
            config = scheduler_config_from_settings(in_force)
            row.to_profile_id = scheduler_profile_ensure(config)
            row.cards_total = CardMemory.objects.filter(learner_id=learner_id, stage=MemoryStage.REVIEW).count()
        job_start(RESCHEDULES, row, now=now, fields=("to_profile", "cards_total"))
    # Cards of a course whose memory model is in use for the learner are moved under it.
    in_force = scheduling_settings_in_force(settings or SchedulingSettings(learner_id=learner_id))
    configs = card_configs_get(learner=row.learner, settings=in_force)
    return row, replace(configs, base=config)


def _batch_reschedule(row: Reschedule, *, configs: CardConfigs) -> bool:
    """Move the next batch of the learner's review cards (by card id); False once none is left."""
    for attempt in range(_BATCH_ATTEMPTS):
        try:
            with learner_turn(learner_id=row.learner_id):
                return _batch_locked(row, configs=configs)
        except SyncInProgress:
            # Reviews kept the turn: they win, and the batch is read again after them.
            if attempt == _BATCH_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _batch_locked(row: Reschedule, *, configs: CardConfigs) -> bool:
    """One batch inside the learner's turn: each card read as the latest review left it, its progress saved with it."""
    memories = list(
        CardMemory.objects.filter(learner_id=row.learner_id, stage=MemoryStage.REVIEW, card_id__gt=row.last_card_id)
        .order_by("card_id")
        .only("pk", "card_id", *_STATE_FIELDS)[:RESCHEDULE_BATCH]
    )
    if not memories:
        return False
    now = timezone.now()
    moved: list[CardMemory] = []
    for memory in memories:
        state = memory_state_of(memory)
        assert state is not None  # noqa: S101 - a stored row always has a state
        due = due_under(state, config=configs.of(memory.card_id), learner_id=row.learner_id, card_id=memory.card_id)
        if due != memory.due:
            memory.due = due
            memory.updated_at = now
            moved.append(memory)
    _dues_store(moved, now=now)
    row.last_card_id = memories[-1].card_id
    row.cards_examined += len(memories)
    row.cards_moved += len(moved)
    job_heartbeat(RESCHEDULES, row, fields=("last_card_id", "cards_examined", "cards_moved"))
    return len(memories) == RESCHEDULE_BATCH


def due_under(state: MemoryState, *, config: SchedulerConfig, learner_id: int, card_id: int) -> datetime:
    """The due date a review-stage card has under `config`: its own when fuzz could have drawn it, else fuzz's draw.

    A due date whose interval lies in the range fsrs fuzzes the card's new interval into is one a
    review under `config` could have given (load balancing picks its day in that range), so it
    stands: a run under unchanged settings moves nothing, nor does a second run. Any other card gets
    the day fuzz draws with the seed of the review that left it in `state` (`rescheduled_due`).
    """
    drawn = rescheduled_due(state, config=config, learner_id=learner_id, card_id=card_id)
    interval = state.due - state.last_review
    if interval % timedelta(days=1):
        return drawn
    days = interval.days
    nominal = config.scheduler()._next_interval(stability=state.stability)
    low, high = fuzz_range(nominal, maximum_interval=config.maximum_interval) or (nominal, nominal)
    return state.due if low <= days <= high or days == (drawn - state.last_review).days else drawn


# New due dates as two arrays, one statement: Django's bulk_update builds a CASE arm per row, which
# PostgreSQL takes several times longer to plan than to run.
_DUES_SQL = """
UPDATE {table} AS memory SET due = new.due, updated_at = %s
FROM unnest(%s::bigint[], %s::timestamptz[]) AS new (id, due)
WHERE memory.id = new.id
"""


def _dues_store(moved: list[CardMemory], *, now: datetime) -> None:
    if not moved:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            _DUES_SQL.format(table=CardMemory._meta.db_table),
            [now, [memory.pk for memory in moved], [memory.due for memory in moved]],
        )


# What memory_state_of reads of a row.
_STATE_FIELDS = ("stage", "step", "stability", "difficulty", "due", "last_review", "reps", "lapses")
