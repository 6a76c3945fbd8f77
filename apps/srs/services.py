"""Reviews: applied in time order under a row lock, replayed when they arrive late, and undone."""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction

from apps.common.clock import latest_client_time
from apps.common.errors import Conflict, DomainError, IdempotencyKeyReused, NotFound
from apps.content.selectors import visible_card_ids
from apps.srs import scheduling
from apps.srs.config import (
    review_scheduling_get,
    scheduler_config_from_json,
    scheduling_settings_get,
)
from apps.srs.memory import memory_state_of, memory_state_store
from apps.srs.models import CardMemory, ReviewKind, ReviewLog, ReviewSource, SchedulingSettings
from apps.srs.scheduling import MemoryState, Rating, ReviewEvent, card_fuzz_seed

# An offline session's worth of reviews; larger uploads are split by the client.
BATCH_LIMIT = 1000
# Concurrent first reviews of a new card collide on its memory row; the loser retries.
_WRITE_ATTEMPTS = 3


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
    # The card's memory after the review was recorded (None: new again after an undo).
    state: MemoryState | None
    created: bool
    replayed: bool = False


def _write_memory(
    memory: CardMemory | None,
    *,
    learner_id: int,
    card_id: int,
    state: MemoryState,
    first_review: datetime,
    settings: SchedulingSettings,
) -> CardMemory:
    """Store `state` in the card's memory row (created if the card was new) and flag leeches."""
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
    if memory.pk is None:
        memory.save(force_insert=True)
    else:
        memory.save()
    return memory


def _active_history(*, learner_id: int, card_id: int) -> list[tuple[ReviewLog, ReviewEvent]]:
    logs = (
        ReviewLog.objects.filter(learner_id=learner_id, card_id=card_id, kind=ReviewKind.REVIEW, undone_by__isnull=True)
        .select_related("profile")
        .order_by("reviewed_at", "client_review_id")
    )
    return [(log, _event_of(log)) for log in logs]


def _event_of(log: ReviewLog) -> ReviewEvent:
    assert log.profile is not None and log.rating is not None  # noqa: S101 - guaranteed by a check constraint
    return ReviewEvent(
        reviewed_at=log.reviewed_at,
        review_id=str(log.client_review_id),
        rating=Rating(log.rating),
        config=scheduler_config_from_json(log.profile.config),
    )


def _validate(*, learner: Any, reviews: list[ReviewInput], now: datetime, field_prefix: str) -> None:
    """Refuse the whole upload, naming every bad item, before anything is written.

    When the only fault is cards the learner cannot study, the refusal is a 404, as for any request
    that names something absent; any other fault makes it a 400 that names the unknown cards too. A
    review already recorded is resent as it was, even when its card has since been archived: an
    offline client's queue must be able to empty.
    """
    visible = visible_card_ids(card_ids=[review.card_id for review in reviews])
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

    A review older than the card's last applied one is recorded and the card's state is rebuilt by
    replaying its whole history in time order, so histories from several devices merge to the same
    state whatever order they arrive in. An item whose client_review_id another item, or a review
    already recorded, uses for a different review makes the whole upload invalid.
    """
    try:
        return _submit(learner=learner, reviews=reviews, now=now, field_prefix=field_prefix)
    except _KeyReused as reused:
        raise ReviewsInvalid(reused.message, fields=reused.fields) from None


def _submit(*, learner: Any, reviews: list[ReviewInput], now: datetime, field_prefix: str) -> list[ReviewOutcome]:
    if len(reviews) > BATCH_LIMIT:
        raise ReviewsInvalid(f"At most {BATCH_LIMIT} reviews per request.")
    _validate(learner=learner, reviews=reviews, now=now, field_prefix=field_prefix)
    for attempt in range(_WRITE_ATTEMPTS):
        try:
            with transaction.atomic():
                # Resent ids are rare: the first attempt lets the log's unique constraint catch them,
                # and only a retry looks them up first.
                return _record(
                    learner=learner, reviews=reviews, now=now, field_prefix=field_prefix, look_up_seen=attempt > 0
                )
        except IntegrityError:
            if attempt == _WRITE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def _record(
    *, learner: Any, reviews: list[ReviewInput], now: datetime, field_prefix: str, look_up_seen: bool
) -> list[ReviewOutcome]:
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
        settings, config, profile_id = review_scheduling_get(learner=learner)
        # Cards are locked in id order, so two batches touching the same cards cannot deadlock.
        for card_id in sorted(pending):
            items = sorted(pending[card_id], key=lambda item: (_time_of(item[1]), str(item[1].client_review_id)))
            outcomes |= _record_card(
                learner_id=learner.pk,
                card_id=card_id,
                items=items,
                settings=settings,
                config=config,
                profile_id=profile_id,
            )
    for index, review in enumerate(reviews):
        if index not in outcomes:
            first = outcomes[first_index[review.client_review_id]]
            outcomes[index] = ReviewOutcome(log=first.log, state=first.state, created=False)
    return [outcomes[index] for index in range(len(reviews))]


def _time_of(review: ReviewInput) -> datetime:
    """The time of a review whose time `_record` has already filled in."""
    assert review.reviewed_at is not None  # noqa: S101 - filled in before any review is applied
    return review.reviewed_at


def _state_from_json(data: dict[str, Any] | None) -> MemoryState | None:
    return MemoryState.from_dict(data) if data is not None else None


def _record_card(
    *,
    learner_id: int,
    card_id: int,
    items: list[tuple[int, ReviewInput]],
    settings: SchedulingSettings,
    config: scheduling.SchedulerConfig,
    profile_id: int,
) -> dict[int, ReviewOutcome]:
    memory = CardMemory.objects.select_for_update().filter(learner_id=learner_id, card_id=card_id).first()
    outcomes: dict[int, ReviewOutcome] = {}
    for index, review in items:
        before = memory_state_of(memory)
        reviewed_at = _time_of(review)
        in_order = before is None or reviewed_at > before.last_review
        log = ReviewLog(
            learner_id=learner_id,
            card_id=card_id,
            kind=ReviewKind.REVIEW,
            client_review_id=review.client_review_id,
            rating=review.rating,
            reviewed_at=reviewed_at,
            duration_ms=review.duration_ms,
            source=review.source,
            state_before=before.to_dict() if before else None,
            profile_id=profile_id,
        )
        if in_order:
            after = scheduling.review(
                before,
                rating=Rating(review.rating),
                reviewed_at=reviewed_at,
                config=config,
                fuzz_seed=card_fuzz_seed(learner_id=learner_id, card_id=card_id, state=before),
            )
        else:
            event = ReviewEvent(reviewed_at, str(review.client_review_id), Rating(review.rating), config)
            history = [event for _, event in _active_history(learner_id=learner_id, card_id=card_id)]
            after = scheduling.replay([*history, event], learner_id=learner_id, card_id=card_id)[-1]
        log.state_after = after.to_dict()
        log.save(force_insert=True)
        memory = _write_memory(
            memory,
            learner_id=learner_id,
            card_id=card_id,
            state=after,
            first_review=reviewed_at,
            settings=settings,
        )
        outcomes[index] = ReviewOutcome(log=log, state=after, created=True, replayed=not in_order)
    return outcomes


def review_undo(*, learner: Any, review_id: int, now: datetime) -> ReviewOutcome:
    """Revert the learner's latest review of a card; the log records the undo, and keeps the review."""
    with transaction.atomic():
        log = ReviewLog.objects.filter(learner=learner, pk=review_id, kind=ReviewKind.REVIEW).first()
        if log is None:
            raise NotFound(f"You have no review {review_id}.")
        memory = CardMemory.objects.select_for_update().filter(learner=learner, card_id=log.card_id).first()
        if ReviewLog.objects.filter(undo_of=log).exists():
            raise Conflict(f"Review {review_id} is already undone.")
        history = _active_history(learner_id=learner.pk, card_id=log.card_id)
        latest = max(history, key=lambda item: (item[1].reviewed_at, item[1].review_id))[0]
        if latest.pk != log.pk:
            raise Conflict(
                f"Only the latest review of a card can be undone; review {latest.pk} came after review {review_id}."
            )
        remaining = [event for other, event in history if other.pk != log.pk]
        restored = scheduling.replay(remaining, learner_id=learner.pk, card_id=log.card_id)[-1] if remaining else None
        undo = ReviewLog.objects.create(
            learner=learner,
            card_id=log.card_id,
            kind=ReviewKind.UNDO,
            reviewed_at=now,
            source=log.source,
            undo_of=log,
            state_before=memory_state_of(memory).to_dict() if memory else None,  # type: ignore[union-attr]
            state_after=restored.to_dict() if restored else None,
        )
        if restored is None:
            if memory is not None:
                memory.delete()
        else:
            first_review = min(event.reviewed_at for event in remaining)
            settings = scheduling_settings_get(learner=learner)
            if memory is not None:
                memory.first_review = first_review
            _write_memory(
                memory,
                learner_id=learner.pk,
                card_id=log.card_id,
                state=restored,
                first_review=first_review,
                settings=settings,
            )
        return ReviewOutcome(log=undo, state=restored, created=True)
