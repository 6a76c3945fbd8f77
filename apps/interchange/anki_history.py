"""A learner's Anki review history (revlog) replayed into their memory of the cards that came from Anki."""

from __future__ import annotations

import io
import logging
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import IntEnum
from typing import IO, Any

from django.conf import settings
from django.utils import timezone

from apps.common.clock import EARLIEST_CLIENT_TIME, latest_client_time
from apps.common.errors import DomainError, NotFound, RequestTooLarge
from apps.common.jobs import (
    JOB_FAILED_ON_OUR_SIDE,
    JobStatus,
    job_claim,
    job_finish,
    job_heartbeat,
    job_publish_after_commit,
)
from apps.content.models import Card
from apps.interchange.anki_package import (
    AnkiPackage,
    AnkiPackageInvalid,
    AnkiReview,
    PackageLimits,
    anki_package_read,
)
from apps.interchange.jobs import ANKI_HISTORY_IMPORTS
from apps.srs.core.scheduling import MemoryStage
from apps.srs.models import AnkiHistoryImport, CardMemory, ReviewLog
from apps.srs.reviews.services import BATCH_LIMIT, MAX_DURATION_MS, ReviewInput, reviews_submit
from apps.srs.settings.config import learner_day_bounds, scheduling_settings_get

logger = logging.getLogger(__name__)

# Names the review ids an import makes: uuid5 of this namespace and (learner, revlog id, note GUID),
# so the same history uploaded again names the same reviews and records nothing twice.
_CLIENT_ID_NAMESPACE = uuid.UUID("5b0c1f8e-4a7d-5c3e-9a51-6f2d8e0b7a14")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# A negative revlog interval is in seconds: minus a day or more counts as a day's interval.
_SECONDS_PER_DAY = 86_400
_ANKI_REVIEW_CARD = 2


class RevlogKind(IntEnum):
    """Anki's revlog.type."""

    LEARN = 0
    REVIEW = 1
    RELEARN = 2
    FILTERED = 3
    MANUAL = 4
    RESCHEDULED = 5


class SkipReason:
    """Why a revlog entry was not recorded: the keys of an import's `skipped` counts."""

    CARD_NOT_MATCHED = "card_not_matched"
    CARD_ARCHIVED = "card_archived"
    OTHER_CARD_OF_NOTE = "other_card_of_note"
    MANUAL = "manual"
    RESCHEDULED = "rescheduled"
    NO_ANSWER = "no_answer"
    CRAM = "filtered_without_rescheduling"
    UNKNOWN_KIND = "unknown_kind"
    BEFORE_2000 = "before_2000"
    IN_THE_FUTURE = "in_the_future"
    ALREADY_RECORDED = "already_recorded"
    # Anki keeps a card's memory from its last learning: what came before a Forget (Reset), or before
    # the card was learned afresh, shapes nothing there, and nothing here.
    BEFORE_RESET = "before_reset"
    BEFORE_LAST_LEARNING = "before_last_learning"


# Kinds whose answers are recall attempts: learning, review and relearning steps. A filtered deck's
# review is one too, when the deck rescheduled it (FSRS's own optimizer keeps those and drops cram).
_RECALL_KINDS = frozenset({RevlogKind.LEARN, RevlogKind.REVIEW, RevlogKind.RELEARN, RevlogKind.FILTERED})
_ANSWER_BUTTONS = frozenset({1, 2, 3, 4})


class AnkiPackageRefused(DomainError):
    code = "invalid_package"


@dataclass(frozen=True)
class HistoryPlan:
    """What an uploaded history comes to: the reviews to record, in time order, and what was left out."""

    reviews: list[ReviewInput]
    total: int
    matched: int
    skipped: Counter[str]
    # Cards whose due date Anki's Set due date moved after their last answer: a moment on the day it set.
    due_dates: dict[int, datetime] = field(default_factory=dict)


def anki_client_review_id(*, learner_id: int, revlog_id: int, guid: str) -> uuid.UUID:
    return uuid.uuid5(_CLIENT_ID_NAMESPACE, f"{learner_id}:{revlog_id}:{guid}")


def _moment_of(revlog_id: int) -> datetime | None:
    """When the review was made: Anki's revlog id is its time in milliseconds since the epoch."""
    try:
        return _EPOCH + timedelta(milliseconds=revlog_id)
    except OverflowError:
        return None


def anki_history_plan(
    *, learner_id: int, package: AnkiPackage, cards_by_guid: dict[str, int], archived_guids: set[str], now: datetime
) -> HistoryPlan:
    """Map a package's revlog onto the learner's reviews of the cards here; pure.

    An entry reaches a card through its Anki card, that card's note, and the note's GUID, which a
    card imported from the package keeps (`cards_by_guid`: GUID to the card a learner may study;
    `archived_guids`: GUIDs of cards that exist but are archived). A note's other Anki cards (the
    reverse of a two-sided note) ask another question of the same note, so only its first card's
    entries count. Entries that are not recall attempts, or lie outside the times a review may
    have, are counted and left out.
    """
    guid_of_note = {note.id: note.guid for note in package.notes}
    first_card_of_note: dict[int, tuple[int, int]] = {}
    for anki_card in package.cards:
        known = first_card_of_note.get(anki_card.note_id)
        if known is None or (anki_card.ordinal, anki_card.id) < known:
            first_card_of_note[anki_card.note_id] = (anki_card.ordinal, anki_card.id)
    note_of_card = {anki_card.id: anki_card.note_id for anki_card in package.cards}

    earliest, latest = EARLIEST_CLIENT_TIME, latest_client_time(now=now)
    skipped: Counter[str] = Counter()
    reviews: list[tuple[datetime, int, ReviewInput]] = []
    matched = 0
    superseded = _entries_superseded(package.reviews)
    for entry in package.reviews:
        note_id = note_of_card.get(entry.card_id)
        guid = guid_of_note.get(note_id) if note_id is not None else None
        card_id = cards_by_guid.get(guid) if guid is not None else None
        if note_id is None or guid is None or card_id is None:
            skipped[SkipReason.CARD_ARCHIVED if guid in archived_guids else SkipReason.CARD_NOT_MATCHED] += 1
            continue
        matched += 1
        reason = _skip_reason(entry.kind, entry.ease, entry.factor)
        if reason is None and first_card_of_note[note_id][1] != entry.card_id:
            reason = SkipReason.OTHER_CARD_OF_NOTE
        if reason is None:
            reason = superseded.get(entry.id)
        moment = _moment_of(entry.id)
        if reason is None and (moment is None or not earliest <= moment <= latest):
            # Past the calendar's end (moment None) is as much in the future as any other clock error.
            early = (moment is not None and moment < earliest) or (moment is None and entry.id < 0)
            reason = SkipReason.BEFORE_2000 if early else SkipReason.IN_THE_FUTURE
        if reason is not None or moment is None:
            skipped[reason or SkipReason.IN_THE_FUTURE] += 1
            continue
        review = ReviewInput(
            card_id=card_id,
            rating=entry.ease,
            client_review_id=anki_client_review_id(learner_id=learner_id, revlog_id=entry.id, guid=guid),
            reviewed_at=moment,
            duration_ms=min(max(entry.taken_ms, 0), MAX_DURATION_MS),
        )
        reviews.append((moment, entry.id, review))
    reviews.sort(key=lambda item: (item[0], item[1]))
    return HistoryPlan(
        reviews=[review for _, _, review in reviews],
        total=len(package.reviews),
        matched=matched,
        skipped=skipped,
        due_dates=_due_dates_set(
            package, cards_by_guid=cards_by_guid, first_cards={c for _, c in first_card_of_note.values()}
        ),
    )


def _due_dates_set(
    package: AnkiPackage, *, cards_by_guid: dict[str, int], first_cards: set[int]
) -> dict[int, datetime]:
    """The cards a Set due date moved after their last answer, and a moment on the day Anki set.

    Set due date leaves a card's memory alone and moves its due day only: what Anki's card says
    (a review card's due is a day number from the collection's day 0) is where it falls due here.
    """
    guid_of_note = {note.id: note.guid for note in package.notes}
    last_entry: dict[int, AnkiReview] = {}
    for entry in package.reviews:
        counts = entry.card_id in first_cards and (entry.ease > 0 or entry.kind == RevlogKind.MANUAL)
        if counts and (entry.card_id not in last_entry or entry.id > last_entry[entry.card_id].id):
            last_entry[entry.card_id] = entry
    moved: dict[int, datetime] = {}
    for anki_card in package.cards:
        last = last_entry.get(anki_card.id)
        if last is None or last.kind != RevlogKind.MANUAL or _is_reset(last) or anki_card.kind != _ANKI_REVIEW_CARD:
            continue
        card_id = cards_by_guid.get(guid_of_note.get(anki_card.note_id, ""))
        if card_id is None or not package.day_zero:
            continue
        # Midday of that day, clear of where either side's day starts.
        moment = _EPOCH + timedelta(seconds=package.day_zero, days=anki_card.due, hours=12)
        moved[card_id] = moment
    return moved


def _is_reset(entry: AnkiReview) -> bool:
    """Anki's Forget (Reset): a manual entry with no ease factor, which makes the card new."""
    return entry.kind == RevlogKind.MANUAL and entry.factor == 0


def _is_cramming(entry: AnkiReview) -> bool:
    return entry.kind == RevlogKind.FILTERED and entry.factor == 0


def _entries_superseded(entries: Iterable[AnkiReview]) -> dict[int, str]:
    """Revlog ids whose answers Anki's own memory computation leaves out, with the rule that drops each.

    As Anki reads a card's revlog for its memory state: walking back from the latest entry, the
    history starts at the first of the card's last run of learning steps; a Forget (Reset) before
    that run, or one with no learning after it, ends the history there. A card whose every answer
    precedes its last Forget is new again. Without a learning run, it starts at the first answer
    with an interval of a day or more. Cramming entries take no part.
    """
    by_card: dict[int, list[AnkiReview]] = {}
    for entry in entries:
        by_card.setdefault(entry.card_id, []).append(entry)
    superseded: dict[int, str] = {}
    for history in by_card.values():
        history.sort(key=lambda entry: entry.id)
        start, reason = _history_start(history)
        for entry in history[:start]:
            if entry.ease in _ANSWER_BUTTONS:
                superseded[entry.id] = reason
    return superseded


def _history_start(history: list[AnkiReview]) -> tuple[int, str]:
    """Where Anki's memory history of one card's time-ordered revlog starts, and why what precedes it is left out."""
    first_of_last_learning: int | None = None
    first_interday_answer: int | None = None
    for index in range(len(history) - 1, -1, -1):
        entry = history[index]
        if _is_cramming(entry):
            continue
        answered = entry.ease > 0
        if answered and (entry.interval >= 1 or entry.interval <= -_SECONDS_PER_DAY):
            first_interday_answer = index
        if answered and entry.kind == RevlogKind.LEARN:
            first_of_last_learning = index
        elif _is_reset(entry):
            if first_of_last_learning is not None:
                return first_of_last_learning, SkipReason.BEFORE_RESET
            if first_interday_answer is not None:
                return first_interday_answer, SkipReason.BEFORE_RESET
            return len(history), SkipReason.BEFORE_RESET
        elif first_of_last_learning is not None:
            return first_of_last_learning, SkipReason.BEFORE_LAST_LEARNING
    if first_of_last_learning is not None:
        return first_of_last_learning, SkipReason.BEFORE_LAST_LEARNING
    return first_interday_answer or 0, SkipReason.BEFORE_LAST_LEARNING


def _skip_reason(kind: int, ease: int, factor: int) -> str | None:
    """Why an entry of this kind and answer is no recall attempt; None when it is one."""
    if kind == RevlogKind.MANUAL:
        return SkipReason.MANUAL
    if kind == RevlogKind.RESCHEDULED:
        return SkipReason.RESCHEDULED
    if kind not in _RECALL_KINDS:
        return SkipReason.UNKNOWN_KIND
    if ease not in _ANSWER_BUTTONS:
        return SkipReason.NO_ANSWER
    if kind == RevlogKind.FILTERED and factor == 0:
        # A filtered deck that does not reschedule (cram, preview) leaves the card's schedule alone.
        return SkipReason.CRAM
    return None


def _package_read(data: bytes) -> AnkiPackage:
    try:
        return anki_package_read(io.BytesIO(data), limits=PackageLimits(package_bytes=settings.ANKI_HISTORY_MAX_BYTES))
    except AnkiPackageInvalid as invalid:
        message = f"The file is not an Anki package this service can read: {invalid.message}"
        raise AnkiPackageRefused(message, fields={"package": [message]}) from None


def anki_history_import_create(*, learner: Any, package: IO[bytes], size: int) -> AnkiHistoryImport:
    """Check an uploaded package and queue its history for replay; nothing is stored when it is refused.

    A worker starts the replay (`anki_history_import_run`) once this commits.
    """
    limit = settings.ANKI_HISTORY_MAX_BYTES
    if size > limit:
        raise RequestTooLarge(
            f"The package is {size} bytes; at most {limit} are accepted (export it from Anki without media)."
        )
    data = package.read(limit + 1)
    if len(data) > limit:
        raise RequestTooLarge(f"The package is larger than the {limit} bytes accepted.")
    _package_read(data)
    row = AnkiHistoryImport.objects.create(learner=learner, package=data, package_bytes=len(data))
    job_publish_after_commit(ANKI_HISTORY_IMPORTS, row)
    return row


def anki_history_import_get(*, learner: Any, import_id: int) -> AnkiHistoryImport:
    """One of the learner's own imports; another learner's is as absent as one that never was."""
    found = AnkiHistoryImport.objects.defer("package").filter(learner=learner, pk=import_id).first()
    if found is None:
        raise NotFound(f"You have no Anki history import {import_id}.")
    return found


def _matching_cards(guids: set[str]) -> tuple[dict[str, int], set[str]]:
    """GUID to the card a learner may study (the oldest, when decks share a note), and GUIDs of archived cards only."""
    cards_by_guid: dict[str, int] = {}
    rows = Card.objects.visible().filter(anki_guid__in=guids).order_by("-pk").values_list("anki_guid", "pk")
    for guid, card_id in rows:
        cards_by_guid[guid] = card_id
    archived = set(
        Card.objects.filter(anki_guid__in=guids - set(cards_by_guid)).values_list("anki_guid", flat=True).distinct()
    )
    return cards_by_guid, archived


def _chunks(reviews: list[ReviewInput], size: int) -> Iterator[list[ReviewInput]]:
    for start in range(0, len(reviews), size):
        yield reviews[start : start + size]


def anki_history_import_run(*, import_id: int, now: datetime) -> AnkiHistoryImport | None:
    """Replay a queued import's history through the batch review path, BATCH_LIMIT reviews at a time.

    Reviews are recorded in time order, so each card's history applies as it happened; a card the
    learner already reviewed here merges them as late reviews. Progress is saved after each batch.
    What was recorded before a failure stays recorded, and the import says failed with the reason;
    uploading the package again records only what is missing. Returns None for an import that is
    already finished.
    """
    # The package leaves the row only when the import finishes, so a claimable import still holds it.
    row: AnkiHistoryImport | None = job_claim(ANKI_HISTORY_IMPORTS, import_id, now=timezone.now())
    if row is None:
        return None
    try:
        _replay(row, now=now)
    except DomainError as error:
        _finish(row, status=JobStatus.FAILED, error=error.message)
    except Exception:
        logger.exception("Anki history import %s failed", import_id)
        _finish(row, status=JobStatus.FAILED, error=JOB_FAILED_ON_OUR_SIDE)
    else:
        _finish(row, status=JobStatus.DONE, error="")
    return row


def _replay(row: AnkiHistoryImport, *, now: datetime) -> None:
    assert row.package is not None  # noqa: S101 - only a finished import has dropped it
    package = _package_read(bytes(row.package))
    cards_by_guid, archived = _matching_cards({note.guid for note in package.notes})
    plan = anki_history_plan(
        learner_id=row.learner_id, package=package, cards_by_guid=cards_by_guid, archived_guids=archived, now=now
    )
    row.total_entries, row.matched = plan.total, plan.matched
    row.skipped = dict(sorted(plan.skipped.items()))
    row.applied, row.progress_done, row.progress_total = 0, 0, len(plan.reviews)
    _progress_save(row)
    learner = row.learner
    for chunk in _chunks(plan.reviews, BATCH_LIMIT):
        fresh = _not_yet_recorded(learner_id=row.learner_id, reviews=chunk)
        created = 0
        if fresh:
            created = sum(outcome.created for outcome in reviews_submit(learner=learner, reviews=fresh, now=now))
        row.applied += created
        already = len(chunk) - created
        if already:
            row.skipped[SkipReason.ALREADY_RECORDED] = row.skipped.get(SkipReason.ALREADY_RECORDED, 0) + already
        row.progress_done += len(chunk)
        _progress_save(row)
    _due_dates_move(learner=learner, due_dates=plan.due_dates)


def _due_dates_move(*, learner: Any, due_dates: dict[int, datetime]) -> None:
    """Each card's due date to the start of the learner's day that holds its moment, where it is in review."""
    if not due_dates:
        return
    settings = scheduling_settings_get(learner=learner)
    for card_id, moment in due_dates.items():
        day_start, _ = learner_day_bounds(settings, now=moment)
        CardMemory.objects.filter(learner=learner, card_id=card_id, stage=MemoryStage.REVIEW).update(due=day_start)


def _not_yet_recorded(*, learner_id: int, reviews: Iterable[ReviewInput]) -> list[ReviewInput]:
    """Reviews whose ids the learner's log does not hold yet: a history uploaded again is not replayed again."""
    reviews = list(reviews)
    recorded = set(
        ReviewLog.objects.filter(
            learner_id=learner_id, client_review_id__in=[review.client_review_id for review in reviews]
        ).values_list("client_review_id", flat=True)
    )
    return [review for review in reviews if review.client_review_id not in recorded]


_PROGRESS_FIELDS = ("total_entries", "matched", "applied", "skipped", "progress_done", "progress_total")


def _progress_save(row: AnkiHistoryImport) -> None:
    job_heartbeat(ANKI_HISTORY_IMPORTS, row, fields=_PROGRESS_FIELDS)


def _finish(row: AnkiHistoryImport, *, status: str, error: str) -> None:
    """The import's end: its outcome saved, and the package it no longer needs removed."""
    row.package = None
    job_finish(
        ANKI_HISTORY_IMPORTS, row, status=status, now=timezone.now(), error=error, fields=(*_PROGRESS_FIELDS, "package")
    )
