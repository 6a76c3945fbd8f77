"""Reviews: applied in time order, one writer per learner at a time; late ones merge by replaying a card's tail."""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date, datetime
from functools import partial
from typing import Any

from django.conf import settings as django_settings
from django.db import IntegrityError, OperationalError, connection, transaction
from django.db.models import Model, QuerySet

from apps.common.clock import latest_client_time
from apps.common.errors import Busy, Conflict, DomainError, IdempotencyKeyReused, NotFound
from apps.common.orm_internals import insert_statement, query_compile, rows_stored
from apps.common.prepared import PreparedQuery
from apps.content.selectors import visible_card_ids_query
from apps.srs.core import load_balancing, scheduling
from apps.srs.core.population import CardConfigs
from apps.srs.core.scheduling import MemoryState, Rating, ReviewEvent
from apps.srs.models import CardMemory, ReviewKind, ReviewLog, ReviewSource, SchedulerProfile, SchedulingSettings
from apps.srs.reviews.due_load import DayStartLoad, due_load_at_day_start, due_load_basis
from apps.srs.reviews.memory import memory_state_of, memory_state_store
from apps.srs.settings.config import scheduler_config_from_json, scheduling_settings_get
from apps.srs.settings.memory_models import COURSE_MODELS_IN_USE, card_configs_from, card_configs_get
from apps.srs.settings.services import review_scheduling_ensure, scheduler_profile_ensure

# An offline session's worth of reviews; larger uploads are split by the client.
BATCH_LIMIT = 1000
# A card is seldom looked at for more than a few minutes; a day means a clock or client bug.
MAX_DURATION_MS = 24 * 3600 * 1000
# A resent review fails the first attempt on the log's unique client id; the next looks ids up first.
_WRITE_ATTEMPTS = 3
# The first key of the PostgreSQL advisory lock that a learner's review writes take turns on (the
# learner is the second); another feature that takes advisory locks picks its own first key.
_SYNC_LOCK_NAMESPACE = 0x5253_0001
# A refused upload is told to come back after this long: a 1,000-review batch takes about a second,
# so this lets the one holding the turn, and a few queued behind it, finish first.
_SYNC_RETRY_AFTER_SECONDS = 5
# PostgreSQL's codes for a lock not granted within lock_timeout, and for a deadlock it broke.
_LOCK_REFUSED_STATES = frozenset({"55P03", "40P01"})
# Every column of a memory row a review sets, overwritten when the row is already there.
_MEMORY_FIELDS = [
    "stage",
    "step",
    "stability",
    "difficulty",
    "due",
    "last_review",
    "reps",
    "lapses",
    "first_review",
    "is_leech",
    "suspended",
    "updated_at",
]


class SyncInProgress(Busy):
    """Another write of the learner's reviews held their turn for longer than the server waits."""

    code = "sync_in_progress"


class ReviewsInvalid(DomainError):
    code = "invalid"


class _KeyReused(DomainError):
    """Some client ids were recorded before for other reviews; the caller says how that reaches the client."""


@dataclass(frozen=True)
class ReviewInput:
    """One review as a client sends it; its client_review_id names this review and no other."""

    card_id: int
    rating: int
    client_review_id: uuid.UUID
    # None: the server's time of receipt. A resent review cannot repeat that time, so it is not compared.
    reviewed_at: datetime | None = None
    duration_ms: int | None = None
    source: str = ReviewSource.DECK


# What a client id stands for: a resend that differs in any of these is another review under a used id.
_PAYLOAD_FIELDS = ("card", "rating", "reviewed_at", "duration_ms", "source")


def _payload(review: ReviewInput, *, now: datetime) -> dict[str, Any]:
    """The review's fields as the log keeps them; a time left to the server is `now`."""
    return {
        "card": review.card_id,
        "rating": review.rating,
        "reviewed_at": review.reviewed_at or now,
        "duration_ms": review.duration_ms,
        "source": str(review.source),
    }


def _recorded_payload(log: ReviewLog) -> dict[str, Any]:
    return {
        "card": log.card_id,
        "rating": log.rating,
        "reviewed_at": log.reviewed_at,
        "duration_ms": log.duration_ms,
        "source": str(log.source),
    }


def _differences(sent: dict[str, Any], kept: dict[str, Any], *, compare_time: bool) -> list[str]:
    """The payload fields in which two reviews under one client id differ; times compare as instants."""
    return [name for name in _PAYLOAD_FIELDS if (compare_time or name != "reviewed_at") and sent[name] != kept[name]]


@dataclass(frozen=True)
class ReviewOutcome:
    log: ReviewLog
    # The card's memory once the review was recorded: right after it, or, for a review that arrived
    # late, after the whole request (None: new again after an undo).
    state: MemoryState | None
    created: bool
    replayed: bool = False
    # The config of each of the learner's cards as the request found them (their course's memory model
    # where it is in use): what the card's recall now is read with.
    configs: CardConfigs | None = None


def _memory_apply(
    memory: CardMemory | None,
    *,
    learner_id: int,
    card_id: int,
    state: MemoryState,
    first_review: datetime,
    settings: SchedulingSettings,
) -> CardMemory:
    """`state` in the card's memory row (a new row if the card was new), leeches flagged; not saved."""
    if memory is None:
        memory = CardMemory(learner_id=learner_id, card_id=card_id, first_review=first_review)
    memory_state_store(memory, state)
    memory.first_review = min(memory.first_review, first_review)
    was_leech = memory.is_leech
    memory.is_leech = state.lapses >= settings.leech_threshold
    if memory.is_leech and not was_leech and settings.suspend_leeches:
        memory.suspended = True
    elif not memory.is_leech and was_leech:
        memory.suspended = False
    return memory


def _active_logs(*, learner_id: int) -> QuerySet[ReviewLog]:
    """The learner's reviews that stand, neither undone nor undos; each holds the states its place in history gives."""
    return ReviewLog.objects.standing().filter(learner_id=learner_id)


# A stored review's new states: its id, state_before and state_after.
_Rewrite = tuple[int, dict[str, Any] | None, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class _Stored:
    """A standing review read to replay a card's tail: what the replay needs, and the row to rewrite."""

    pk: int
    card_id: int
    client_review_id: uuid.UUID
    rating: int
    reviewed_at: datetime
    profile_id: int
    # Read only for the review just before the tail, whose state the replay starts from.
    state_after: dict[str, Any] | None

    def event(self, configs: dict[int, scheduling.SchedulerConfig]) -> ReviewEvent:
        """As a replay event, with the settings it was made with (`configs`: by profile id)."""
        return ReviewEvent(self.reviewed_at, str(self.client_review_id), Rating(self.rating), configs[self.profile_id])


def _validate(*, learner: Any, reviews: list[ReviewInput], now: datetime, field_prefix: str, visible: set[int]) -> None:
    """Refuse the whole upload, naming every bad item, before anything is written.

    `visible`: which of the reviewed cards the learner may study. When the only fault is cards the
    learner cannot study, the refusal is a 404, as for any request that names something absent; any
    other fault makes it a 400 that names the unknown cards too. A review already recorded is resent
    as it was, even when its card has since been archived: an offline client's queue must be able to
    empty.
    """
    hidden = [review.client_review_id for review in reviews if review.card_id not in visible]
    recorded: set[tuple[uuid.UUID | None, int]] = set()
    if hidden:
        recorded = set(
            ReviewLog.objects.filter(learner=learner, client_review_id__in=hidden).values_list(
                "client_review_id", "card_id"
            )
        )
    errors: dict[str, list[str]] = defaultdict(list)
    unknown_cards: set[str] = set()
    first_index: dict[uuid.UUID, int] = {}
    for index, review in enumerate(reviews):
        prefix = field_prefix.format(index=index)
        if review.card_id not in visible and (review.client_review_id, review.card_id) not in recorded:
            errors[f"{prefix}card"].append(f"No card {review.card_id} that you can study.")
            unknown_cards.add(f"{prefix}card")
        if review.reviewed_at is not None and review.reviewed_at > latest_client_time(now=now):
            errors[f"{prefix}reviewed_at"].append(
                f"{review.reviewed_at.isoformat()} is in the future (server time {now.isoformat()})."
            )
        if review.rating not in {rating.value for rating in Rating}:
            errors[f"{prefix}rating"].append("The rating must be 1 (Again), 2 (Hard), 3 (Good) or 4 (Easy).")
        first = first_index.setdefault(review.client_review_id, index)
        differ = _differences(_payload(review, now=now), _payload(reviews[first], now=now), compare_time=True)
        if differ:
            errors[f"{prefix}client_review_id"].append(
                f"{review.client_review_id} is also used by item {first} for a different review "
                f"(it differs in {', '.join(differ)}); each review needs its own client_review_id."
            )
    if errors and set(errors) <= unknown_cards:
        raise NotFound("Some reviews name a card that you cannot study; none was recorded.", fields=dict(errors))
    if errors:
        raise ReviewsInvalid("Some reviews are invalid; none was recorded.", fields=dict(errors))


def review_submit(*, learner: Any, review: ReviewInput, now: datetime) -> ReviewOutcome:
    """Record one review; sent again unchanged, it returns the first result.

    A client_review_id already recorded for a different review is refused with IdempotencyKeyReused.
    """
    try:
        (outcome,) = _submit(learner=learner, reviews=[review], now=now, field_prefix="")
    except _KeyReused as reused:
        raise IdempotencyKeyReused(reused.message, fields=reused.fields) from None
    return outcome


def reviews_submit(
    *, learner: Any, reviews: list[ReviewInput], now: datetime, field_prefix: str = "{index}."
) -> list[ReviewOutcome]:
    """Record reviews all or nothing; per card in time order; a review already recorded changes nothing.

    A review older than the card's last applied one is merged: the card's history is replayed from
    the state before the earliest such review, and the reviews after it are stored with the states
    their new places give, so histories from several devices merge to the same state whatever order
    they arrive in (with load balancing on, but for the due date: a review applied as it arrives is
    balanced, a replayed one takes its plain fuzzed day; both lie in the same fuzz range). An item
    whose client_review_id another item, or a review already recorded, uses for a different review
    makes the whole upload invalid. While another write of the learner's
    reviews holds their turn for longer than REVIEW_SYNC_LOCK_WAIT_SECONDS, the upload is refused
    with SyncInProgress.
    """
    try:
        return _submit(learner=learner, reviews=reviews, now=now, field_prefix=field_prefix)
    except _KeyReused as reused:
        raise ReviewsInvalid(reused.message, fields=reused.fields) from None


# Every column of a memory row, in the model's order: a row read with the turn is built from them.
_MEMORY_COLUMNS = tuple(field.attname for field in CardMemory._meta.concrete_fields)


def _memories_locked(*, learner_id: int, card_ids: Sequence[int]) -> QuerySet[CardMemory, tuple[Any, ...]]:
    # Locked in card order, as every writer of these rows locks them, so writers cannot deadlock.
    return (
        CardMemory.objects.select_for_update()
        .filter(learner_id=learner_id, card_id__in=card_ids)
        .order_by("card_id")
        .values_list(*_MEMORY_COLUMNS)
    )


@dataclass(frozen=True)
class _Read:
    """A read made with the learner's turn: its statement (None: it reads nothing), and how its rows read."""

    statement: tuple[str, Sequence[Any]] | None
    results: Callable[[list[Any]], list[tuple[Any, ...]]]

    @classmethod
    def of_query(cls, query: QuerySet[Any, tuple[Any, ...]]) -> _Read:
        compiled = query_compile(query, using=connection.alias)
        if compiled is None:
            return cls(None, lambda rows: [])
        return cls((compiled.sql, compiled.params), compiled.results)

    @classmethod
    def of_prepared(cls, query: PreparedQuery[Any], *values: Any) -> _Read:
        return cls(query.statement(*values), query.results)


# A single review, the common case, reads with statements compiled once: visibility, then the memory row.
_VISIBLE_CARD = PreparedQuery(lambda card_id: visible_card_ids_query(card_ids=[card_id]).values_list("pk"), -53_001)
_MEMORY_LOCKED = PreparedQuery(
    lambda learner_id, card_id: _memories_locked(learner_id=learner_id, card_ids=[card_id]), -53_002, -53_003
)


def _review_reads(*, learner_id: int, card_ids: list[int], course_models: bool) -> list[_Read]:
    """Which of the cards may be studied, their memory rows, locked, and (with `course_models`) the course
    memory models in use for the learner: read with the learner's turn."""
    models = _Read.of_prepared(COURSE_MODELS_IN_USE, learner_id) if course_models else _Read(None, lambda rows: [])
    if len(card_ids) == 1:
        return [
            _Read.of_prepared(_VISIBLE_CARD, card_ids[0]),
            _Read.of_prepared(_MEMORY_LOCKED, learner_id, card_ids[0]),
            models,
        ]
    return [
        _Read.of_query(visible_card_ids_query(card_ids=card_ids).values_list("pk")),
        _Read.of_query(_memories_locked(learner_id=learner_id, card_ids=card_ids)),
        models,
    ]


def _submit(*, learner: Any, reviews: list[ReviewInput], now: datetime, field_prefix: str) -> list[ReviewOutcome]:
    if len(reviews) > BATCH_LIMIT:
        raise ReviewsInvalid(f"At most {BATCH_LIMIT} reviews per request.")
    card_ids = sorted({review.card_id for review in reviews})
    # Which cards may be studied, and the memory rows of the reviewed cards, are read with the turn:
    # one round trip on PostgreSQL. The upload is validated before anything is written.
    # The course models in use do not change with this request's writes: a retry reuses the first read.
    model_rows: list[tuple[Any, ...]] | None = None
    for attempt in range(_WRITE_ATTEMPTS):
        reads = partial(_review_reads, learner_id=learner.pk, card_ids=card_ids, course_models=model_rows is None)
        try:
            with learner_turn(learner_id=learner.pk, reads=reads) as (visible_rows, memory_rows, models_read):
                if model_rows is None:
                    model_rows = models_read
                _validate(
                    learner=learner,
                    reviews=reviews,
                    now=now,
                    field_prefix=field_prefix,
                    visible={card_id for (card_id,) in visible_rows},
                )
                memories = {
                    memory.card_id: memory
                    for memory in (CardMemory.from_db(connection.alias, _MEMORY_COLUMNS, row) for row in memory_rows)
                }
                # Resent ids are rare: the first attempt lets the log's unique constraint catch them,
                # and only a retry looks them up first.
                return _record(
                    learner=learner,
                    reviews=reviews,
                    now=now,
                    field_prefix=field_prefix,
                    look_up_seen=attempt > 0,
                    memories=memories,
                    configs=card_configs_from(model_rows, settings=scheduling_settings_get(learner=learner)),
                )
        except IntegrityError:
            if attempt == _WRITE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


@contextmanager
def learner_turn(*, learner_id: int, reads: Callable[[], list[_Read]] = list) -> Iterator[list[list[tuple[Any, ...]]]]:
    """A transaction (a savepoint inside another one) in which the learner's review writes take turns.

    Replaying a card reads its history and rewrites what follows, so two writers of one learner
    must not interleave. Waiting for the turn, or for any lock after it, is bounded: past
    REVIEW_SYNC_LOCK_WAIT_SECONDS, or on a deadlock, nothing is written and SyncInProgress is raised.
    The bound lasts to the end of the transaction, a caller's included (a quiz answer or a match
    attempt records its reviews inside its own), so that none of its waits is endless either.

    `reads()` gives reads to make once the turn is taken (built inside the transaction, as a locking
    read must be); their rows are yielded, in order.
    """
    try:
        with transaction.atomic():
            yield _learner_lock(learner_id=learner_id, reads=reads())
    except OperationalError as error:
        if getattr(error.__cause__, "sqlstate", None) not in _LOCK_REFUSED_STATES:
            raise
        raise _sync_refused() from None


def _sync_lock_key(learner_id: int) -> int:
    # Advisory lock keys are 32-bit: ids past 2**31 wrap, which at worst makes two learners take turns.
    return (learner_id + 2**31) % 2**32 - 2**31


def review_upload_admit(*, learner_id: int) -> None:
    """Refuse at once, with SyncInProgress, an upload while another write of the learner's reviews holds their turn.

    One round trip and no lock: asked before the upload's body is even read, so a client that sends
    many uploads at once costs the server a query for each but the first, and holds no thread
    waiting. The turn itself still decides: two uploads that both pass here take it one after the other.
    """
    with connection.cursor() as cursor:
        # A two-key advisory lock shows its keys as unsigned object ids, the second with objsubid 2; a turn
        # this connection holds itself (a caller's transaction that recorded reviews already) is no other's.
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND objid = %s "
            "AND objsubid = 2 AND granted AND pid <> pg_backend_pid())",
            [_SYNC_LOCK_NAMESPACE, _sync_lock_key(learner_id) % 2**32],
        )
        taken = cursor.fetchone()[0]
    if taken:
        raise _sync_refused()


def _sync_refused() -> SyncInProgress:
    return SyncInProgress(
        "Other reviews of yours are being recorded right now; nothing from this request was recorded. "
        f"Send it again in {_SYNC_RETRY_AFTER_SECONDS} seconds.",
        retry_after=_SYNC_RETRY_AFTER_SECONDS,
    )


def _learner_lock(*, learner_id: int, reads: list[_Read]) -> list[list[tuple[Any, ...]]]:
    """Wait, at most REVIEW_SYNC_LOCK_WAIT_SECONDS, for the learner's turn, then make `reads`.

    The lock and the reads go in one round trip: each statement of it takes its own snapshot, so the
    reads see everything committed before the turn was granted.
    """
    wait_ms = max(1, round(django_settings.REVIEW_SYNC_LOCK_WAIT_SECONDS * 1000))
    key = _sync_lock_key(learner_id)
    # Both numbers are integers computed here; the reads' values travel as parameters.
    statements = [f"SET LOCAL lock_timeout = {wait_ms}", f"SELECT pg_advisory_xact_lock({_SYNC_LOCK_NAMESPACE}, {key})"]
    params: list[Any] = []
    for read in reads:
        if read.statement is not None:
            statements.append(read.statement[0])
            params += read.statement[1]
    found: list[list[tuple[Any, ...]]] = []
    with connection.cursor() as cursor:
        cursor.execute("; ".join(statements), params)
        cursor.nextset()  # past SET to the lock's result
        for read in reads:
            if read.statement is None:
                found.append([])
                continue
            cursor.nextset()
            found.append(read.results(cursor.fetchall()))
    return found


def _record(
    *,
    learner: Any,
    reviews: list[ReviewInput],
    now: datetime,
    field_prefix: str,
    look_up_seen: bool,
    memories: dict[int, CardMemory],
    configs: CardConfigs,
) -> list[ReviewOutcome]:
    """Apply the reviews; `memories`: the reviewed cards' memory rows, locked with the learner's turn."""
    seen = (
        {
            log.client_review_id: log
            for log in ReviewLog.objects.filter(
                learner=learner, client_review_id__in={review.client_review_id for review in reviews}
            )
        }
        if look_up_seen
        else {}
    )
    outcomes: dict[int, ReviewOutcome] = {}
    pending: dict[int, list[tuple[int, ReviewInput]]] = defaultdict(list)
    first_index: dict[uuid.UUID, int] = {}
    reused: dict[str, list[str]] = {}
    for index, review in enumerate(reviews):
        if review.client_review_id in seen:
            log = seen[review.client_review_id]
            differ = _differences(
                _payload(review, now=now), _recorded_payload(log), compare_time=review.reviewed_at is not None
            )
            if differ:
                reused[f"{field_prefix.format(index=index)}client_review_id"] = [
                    f"{review.client_review_id} is already recorded for a different review (review {log.pk}, "
                    f"which differs in {', '.join(differ)}); send this review with a new client_review_id."
                ]
            outcomes[index] = ReviewOutcome(log=log, state=_state_from_json(log.state_after), created=False)
        elif review.client_review_id in first_index:
            continue  # the same review twice in one upload (checked identical): answered with the first one's result
        else:
            first_index[review.client_review_id] = index
            pending[review.card_id].append((index, replace(review, reviewed_at=review.reviewed_at or now)))
    if reused:
        raise _KeyReused("A client_review_id already names another review; nothing was recorded.", fields=reused)

    if pending:
        settings, config, profile_id = review_scheduling_ensure(learner=learner)
        outcomes |= _record_cards(
            learner_id=learner.pk,
            pending=pending,
            memories=memories,
            settings=settings,
            scheduled_with=_card_profiles(configs, card_ids=pending, base=(config, profile_id)),
        )
    for index, review in enumerate(reviews):
        if index not in outcomes:
            first = outcomes[first_index[review.client_review_id]]
            outcomes[index] = ReviewOutcome(log=first.log, state=first.state, created=False)
    return [replace(outcomes[index], configs=configs) for index in range(len(reviews))]


def _time_of(review: ReviewInput) -> datetime:
    """The time of a review whose time `_record` has already filled in."""
    assert review.reviewed_at is not None  # noqa: S101 - filled in before any review is applied
    return review.reviewed_at


def _state_from_json(data: dict[str, Any] | None) -> MemoryState | None:
    return MemoryState.from_dict(data) if data is not None else None


def _state_json(state: MemoryState | None) -> dict[str, Any] | None:
    return state.to_dict() if state is not None else None


def _card_profiles(
    configs: CardConfigs, *, card_ids: Iterable[int], base: tuple[scheduling.SchedulerConfig, int]
) -> dict[int, tuple[scheduling.SchedulerConfig, int]]:
    """Each card's config and its stored profile: the learner's own (`base`), or its course model's."""
    profiles = {base[0]: base[1]}
    found = {}
    for card_id in card_ids:
        config = configs.of(card_id)
        if config not in profiles:
            profiles[config] = scheduler_profile_ensure(config)
        found[card_id] = (config, profiles[config])
    return found


def _record_cards(
    *,
    learner_id: int,
    pending: dict[int, list[tuple[int, ReviewInput]]],
    memories: dict[int, CardMemory],
    settings: SchedulingSettings,
    scheduled_with: dict[int, tuple[scheduling.SchedulerConfig, int]],
) -> dict[int, ReviewOutcome]:
    """Apply each card's new reviews; a fixed number of statements whatever the cards' histories.

    A card whose earliest new review comes after its last applied one continues from its memory.
    Otherwise only the card's history from that review on is read and replayed, from the state the
    review before it left, and the reviews in it whose stored states change are rewritten.
    """
    card_ids = sorted(pending)
    items = {
        card_id: sorted(pending[card_id], key=lambda item: (_time_of(item[1]), str(item[1].client_review_id)))
        for card_id in card_ids
    }
    stored = {card_id: memory_state_of(memories.get(card_id)) for card_id in card_ids}
    since: dict[int, datetime] = {}
    for card_id in card_ids:
        last = stored[card_id]
        earliest = _time_of(items[card_id][0][1])
        if last is not None and earliest <= last.last_review:
            since[card_id] = earliest
    configs = {profile_id: config for config, profile_id in scheduled_with.values()}
    tails = _tails(learner_id=learner_id, since=since, configs=configs)

    outcomes: dict[int, ReviewOutcome] = {}
    created: list[ReviewLog] = []
    rewritten: list[_Rewrite] = []
    changed: list[CardMemory] = []
    for card_id in card_ids:
        start, tail = tails[card_id] if card_id in since else (stored[card_id], [])
        new_logs = [
            ReviewLog(
                learner_id=learner_id,
                card_id=card_id,
                kind=ReviewKind.REVIEW,
                client_review_id=review.client_review_id,
                rating=review.rating,
                reviewed_at=_time_of(review),
                duration_ms=review.duration_ms,
                source=review.source,
                profile_id=scheduled_with[card_id][1],
            )
            for _, review in items[card_id]
        ]
        afters, final = _merge(
            learner_id=learner_id,
            card_id=card_id,
            start=start,
            tail=tail,
            new_logs=new_logs,
            configs=configs,
            rewritten=rewritten,
        )
        created += new_logs
        # As when applied one by one: late when not after every review the card had by then. A late
        # review answers with the card's memory, the others with the state they left.
        last = stored[card_id]
        latest = last.last_review if last is not None else None
        for (index, _), log, after in zip(items[card_id], new_logs, afters, strict=True):
            replayed = latest is not None and log.reviewed_at <= latest
            outcomes[index] = ReviewOutcome(
                log=log, state=final if replayed else after, created=True, replayed=replayed
            )
            latest = log.reviewed_at if latest is None else max(latest, log.reviewed_at)
        changed.append(
            _memory_apply(
                memories.get(card_id),
                learner_id=learner_id,
                card_id=card_id,
                state=final,
                first_review=new_logs[0].reviewed_at,
                settings=settings,
            )
        )

    if settings.load_balancing:
        _due_dates_balance(
            learner_id=learner_id,
            settings=settings,
            card_configs={card_id: config for card_id, (config, _) in scheduled_with.items()},
            outcomes=outcomes,
            memories=changed,
        )
    _reviews_store(created=created, rewritten=rewritten, memories=changed)
    return outcomes


def _reviews_store(*, created: list[ReviewLog], rewritten: list[_Rewrite], memories: list[CardMemory]) -> None:
    """Insert the new logs, rewrite replayed states, and insert or overwrite the memory rows.

    One upsert per kind of memory row (Django inserts rows with and without an id apart): new cards
    get their row, reviewed cards have theirs overwritten. Every statement goes in one round trip, as
    Django's bulk_create would build them; with no new log to insert, bulk_create runs them.
    """
    if not created:
        ReviewLog.objects.bulk_create(created)
        _states_rewrite(rewritten)
        CardMemory.objects.bulk_create(
            memories, update_conflicts=True, unique_fields=["learner", "card"], update_fields=_MEMORY_FIELDS
        )
        return
    statements = [_insert_statement(ReviewLog, created, returning=True)]
    if rewritten:
        statements.append(_rewrite_statement(rewritten))
    for group, with_id in (
        ([m for m in memories if m.pk is not None], True),
        ([m for m in memories if m.pk is None], False),
    ):
        if group:
            statements.append(_insert_statement(CardMemory, group, with_id=with_id, upsert=True))
    with connection.cursor() as cursor:
        cursor.execute("; ".join(sql for sql, _ in statements), [param for _, params in statements for param in params])
        ids = cursor.fetchall()
    for log, (pk,) in zip(created, ids, strict=True):
        log.pk = pk
    rows_stored([*created, *memories], using=connection.alias)


def _insert_statement(
    model: type[Model], rows: list[Any], *, with_id: bool = False, returning: bool = False, upsert: bool = False
) -> tuple[str, tuple[Any, ...]]:
    """The INSERT bulk_create runs for `rows` (a memory upsert with `upsert`); RETURNING their ids with `returning`."""
    conflict = (("learner", "card"), _MEMORY_FIELDS) if upsert else None
    return insert_statement(model, rows, connection=connection, with_id=with_id, returning=returning, upsert=conflict)


def _due_dates_balance(
    *,
    learner_id: int,
    settings: SchedulingSettings,
    card_configs: dict[int, scheduling.SchedulerConfig],
    outcomes: dict[int, ReviewOutcome],
    memories: list[CardMemory],
) -> None:
    """Move the due date of each review that continues its card's history to the least loaded day fuzz allows.

    Reviews that arrived late were replayed, and a replay reproduces the history's own schedule: it
    is never load balanced (it could not be repeated: the due counts move on). Every other review is
    balanced against the learner's due counts as its learner day began (`due_load_at_day_start`),
    as its preview was: a day's reviews do not shift each other's days, so each gives the interval
    its button showed. The reviews of an upload that cross into a new day find the earlier day's
    reviews in that day's counts. Only due dates change (FSRS's next state does not depend on them);
    updates the logs' states, `outcomes` and the cards' memory rows in `memories` in place.
    """
    live = sorted(
        ((index, outcome) for index, outcome in outcomes.items() if not outcome.replayed),
        key=lambda pair: (pair[1].log.reviewed_at, str(pair[1].log.client_review_id)),
    )
    basis = due_load_basis(settings)
    spans_by_day: dict[date, list[tuple[date, date]]] = defaultdict(list)
    for _, outcome in live:
        if outcome.state is not None and (
            span := load_balancing.balance_days(
                outcome.state, reviewed_at=outcome.log.reviewed_at, config=card_configs[outcome.log.card_id], load=basis
            )
        ):
            spans_by_day[basis.day_of(outcome.log.reviewed_at)].append(span)
    if not spans_by_day:
        return
    # A card's next review in this upload starts from the state this one leaves.
    following: dict[int, ReviewLog] = {}
    latest: dict[int, ReviewLog] = {}
    for _, outcome in live:
        if outcome.log.card_id in latest:
            following[id(latest[outcome.log.card_id])] = outcome.log
        latest[outcome.log.card_id] = outcome.log
    finals: dict[int, MemoryState] = {}
    # What the upload's reviews moved so far, as (day, change): a later day's counts hold them.
    moves: list[tuple[date, int]] = []
    day: date | None = None
    day_start: DayStartLoad | None = None
    counts: dict[date, int] = {}
    for index, outcome in live:
        log, after = outcome.log, outcome.state
        assert after is not None  # noqa: S101 - a review that continues a history leaves a state
        before = _state_from_json(log.state_before)
        review_day = basis.day_of(log.reviewed_at)
        if review_day != day:
            day = review_day
            day_start = None
            if review_day in spans_by_day:
                day_start = due_load_at_day_start(
                    learner_id=learner_id, settings=settings, spans=spans_by_day[review_day], moment=log.reviewed_at
                )
                counts = dict(day_start.load.due_counts)
                for moved_day, change in moves:
                    counts[moved_day] = max(counts.get(moved_day, 0) + change, 0)
        balanced = after
        config = card_configs[log.card_id]
        if day_start is not None:
            leaving = day_start.leaving_day(log.card_id, before)
            seed = scheduling.card_fuzz_seed(learner_id=learner_id, card_id=log.card_id, state=before)
            balanced = load_balancing.due_balanced(
                before,
                after,
                reviewed_at=log.reviewed_at,
                config=config,
                load=replace(day_start.load, due_counts=counts),
                rating=scheduling.Rating(log.rating or scheduling.Rating.AGAIN),
                outcomes=scheduling.review_outcomes(before, reviewed_at=log.reviewed_at, config=config, fuzz_seed=seed),
                leaving=leaving,
            )
            # The card weighs where the day found it until the day ends, for its later reviews as for their previews.
            day_start.counted_on.setdefault(log.card_id, leaving)
        if before is not None and before.stage == scheduling.MemoryStage.REVIEW:
            moves.append((basis.day_of(before.due), -1))
        if balanced.stage == scheduling.MemoryStage.REVIEW:
            moves.append((basis.day_of(balanced.due), 1))
        if balanced == after:
            continue
        log.state_after = balanced.to_dict()
        next_log = following.get(id(log))
        if next_log is not None:
            next_log.state_before = log.state_after
        else:
            finals[log.card_id] = balanced
        outcomes[index] = replace(outcome, state=balanced)
    for index, outcome in outcomes.items():
        if outcome.replayed and outcome.log.card_id in finals:
            outcomes[index] = replace(outcome, state=finals[outcome.log.card_id])
    for memory in memories:
        if memory.card_id in finals:
            memory_state_store(memory, finals[memory.card_id])


def _merge(
    *,
    learner_id: int,
    card_id: int,
    start: MemoryState | None,
    tail: list[_Stored],
    new_logs: list[ReviewLog],
    configs: dict[int, scheduling.SchedulerConfig],
    rewritten: list[_Rewrite],
) -> tuple[list[MemoryState], MemoryState]:
    """Replay a card's tail with its new reviews (in time order) merged in, from the state before the tail.

    Fills in the new logs' states, adds the stored reviews whose states move to `rewritten`, and
    returns the state after each new review, and the card's state after all.
    """
    merged: list[tuple[ReviewEvent, _Stored | ReviewLog]] = [(review.event(configs), review) for review in tail]
    for log in new_logs:
        assert log.profile_id is not None and log.rating is not None  # noqa: S101 - set by the caller
        event = ReviewEvent(log.reviewed_at, str(log.client_review_id), Rating(log.rating), configs[log.profile_id])
        merged.append((event, log))
    merged.sort(key=lambda pair: pair[0])
    states = scheduling.replay([event for event, _ in merged], learner_id=learner_id, card_id=card_id, start=start)
    afters: list[MemoryState] = []
    state_before = _state_json(start)
    for (_, entry), after in zip(merged, states, strict=True):
        state_after = after.to_dict()
        if isinstance(entry, ReviewLog):
            entry.state_before, entry.state_after = state_before, state_after
            afters.append(after)
        elif afters:
            # A stored review's states change exactly when a new review now comes before it (its
            # count of reviews so far, at least, moves); those before every new one stand.
            rewritten.append((entry.pk, state_before, state_after))
        state_before = state_after
    return afters, states[-1]


def _tails(
    *, learner_id: int, since: dict[int, datetime], configs: dict[int, scheduling.SchedulerConfig]
) -> dict[int, tuple[MemoryState | None, list[_Stored]]]:
    """Per card: the state its latest standing review before `since` left, and its standing reviews from `since` on.

    One statement for every card: per card, the reviews from the time of the one just before `since`
    (an index range on review_log_card_time), that one included, in replay order. The settings of
    reviews made with others than `configs` holds are added to it.
    """
    if not since:
        return {}
    rows = _tail_rows(learner_id, since)
    starts: dict[int, MemoryState | None] = {}
    tails: dict[int, list[_Stored]] = defaultdict(list)
    for row in rows:
        review = _Stored(*row)
        if review.reviewed_at < since[review.card_id]:
            starts[review.card_id] = _state_from_json(review.state_after)  # the last one read is the latest
        else:
            tails[review.card_id].append(review)
    others = {review.profile_id for reviews in tails.values() for review in reviews} - set(configs)
    if others:
        for pk, data in SchedulerProfile.objects.filter(pk__in=others).values_list("pk", "config"):
            configs[pk] = scheduler_config_from_json(data)
    return {card_id: (starts.get(card_id), tails[card_id]) for card_id in since}


# Each card's tail, as PostgreSQL runs it best: the ORM's form, an OR of a subquery per card, costs more
# to build and to plan than to run; here each card is one row of the arrays, read with two index scans.
# A state is read only where the replay starts from it.
_TAILS_SQL = """
SELECT tail.id, tail.card_id, tail.client_review_id, tail.rating, tail.reviewed_at, tail.profile_id,
    CASE WHEN tail.reviewed_at < wanted.since THEN tail.state_after END
FROM unnest(%(cards)s::bigint[], %(since)s::timestamptz[]) AS wanted (card_id, since)
CROSS JOIN LATERAL (
    SELECT log.* FROM {table} AS log
    WHERE log.learner_id = %(learner)s AND log.card_id = wanted.card_id AND log.kind = %(review)s
        AND NOT EXISTS (SELECT 1 FROM {table} AS undo WHERE undo.undo_of_id = log.id)
        AND log.reviewed_at >= coalesce((
            SELECT previous.reviewed_at FROM {table} AS previous
            WHERE previous.learner_id = %(learner)s AND previous.card_id = wanted.card_id
                AND previous.kind = %(review)s AND previous.reviewed_at < wanted.since
                AND NOT EXISTS (SELECT 1 FROM {table} AS undo WHERE undo.undo_of_id = previous.id)
            ORDER BY previous.reviewed_at DESC LIMIT 1
        ), wanted.since)
) AS tail
ORDER BY tail.card_id, tail.reviewed_at, tail.client_review_id
"""


def _tail_rows(learner_id: int, since: dict[int, datetime]) -> list[tuple[Any, ...]]:
    params: dict[str, Any] = {
        "cards": list(since),
        "since": list(since.values()),
        "learner": learner_id,
        "review": ReviewKind.REVIEW,
    }
    with connection.cursor() as cursor:
        cursor.execute(_TAILS_SQL.format(table=ReviewLog._meta.db_table), params)
        # Django has psycopg hand jsonb over as text, for its JSONField to decode.
        return [(*row[:-1], json.loads(row[-1]) if row[-1] is not None else None) for row in cursor.fetchall()]


# The new states travel as one JSON document: a parameter per row, or an array of them, costs more
# to quote than the update costs to run.
_REWRITE_SQL = """
UPDATE {table} AS log SET state_before = new.state_before, state_after = new.state_after
FROM jsonb_to_recordset(%s::jsonb) AS new (id bigint, state_before jsonb, state_after jsonb)
WHERE log.id = new.id
"""


def _rewrite_statement(rows: list[_Rewrite]) -> tuple[str, tuple[Any, ...]]:
    document = [{"id": pk, "state_before": before, "state_after": after} for pk, before, after in rows]
    return _REWRITE_SQL.format(table=ReviewLog._meta.db_table), (json.dumps(document),)


def _states_rewrite(rows: list[_Rewrite]) -> None:
    """Store the replayed states of reviews (id, state_before, state_after): one statement."""
    if not rows:
        return
    with connection.cursor() as cursor:
        cursor.execute(*_rewrite_statement(rows))


def review_undo(*, learner: Any, review_id: int, now: datetime) -> ReviewOutcome:
    """Revert the learner's latest review of a card; the log records the undo, and keeps the review.

    Only the latest review can be undone, so the card returns to the state the review before it
    left, read from that review's log.
    """
    with learner_turn(learner_id=learner.pk):
        log = ReviewLog.objects.filter(learner=learner, pk=review_id, kind=ReviewKind.REVIEW).first()
        if log is None:
            raise NotFound(f"You have no review {review_id}.")
        memory = CardMemory.objects.select_for_update().filter(learner=learner, card_id=log.card_id).first()
        if ReviewLog.objects.filter(undo_of=log).exists():
            raise Conflict(f"Review {review_id} is already undone.")
        card_logs = _active_logs(learner_id=learner.pk).filter(card_id=log.card_id)
        latest, *earlier = card_logs.order_by("-reviewed_at", "-client_review_id")[:2]
        if latest.pk != log.pk:
            raise Conflict(
                f"Only the latest review of a card can be undone; review {latest.pk} came after review {review_id}."
            )
        restored = _state_from_json(earlier[0].state_after) if earlier else None
        undo = ReviewLog.objects.create(
            learner=learner,
            card_id=log.card_id,
            kind=ReviewKind.UNDO,
            reviewed_at=now,
            source=log.source,
            undo_of=log,
            state_before=_state_json(memory_state_of(memory)),
            state_after=_state_json(restored),
        )
        if restored is None:
            if memory is not None:
                memory.delete()
        else:
            first_review = card_logs.exclude(pk=log.pk).order_by("reviewed_at").values_list("reviewed_at", flat=True)[0]
            if memory is not None:
                memory.first_review = first_review
            _memory_apply(
                memory,
                learner_id=learner.pk,
                card_id=log.card_id,
                state=restored,
                first_review=first_review,
                settings=scheduling_settings_get(learner=learner),
            ).save()
        return ReviewOutcome(log=undo, state=restored, created=True, configs=card_configs_get(learner=learner))
