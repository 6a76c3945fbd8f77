"""Reads of learners' memory: the study queue, with what each rating would do."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache, lru_cache
from typing import Any

from django.db import connection
from django.http import Http404

from apps.common.orm_internals import rows_converted
from apps.common.prepared import prepared_cursor
from apps.content.models import Card, Deck
from apps.content.selectors import decks_visible
from apps.srs.core.scheduling import MemoryStage, MemoryState, Rating
from apps.srs.models import CardMemory, ReviewKind, ReviewLog
from apps.srs.reviews.due_load import next_intervals_preview
from apps.srs.reviews.memory import memory_state_of
from apps.srs.reviews.recall import CardRecall, RecallBasis
from apps.srs.settings.config import learner_day_bounds, scheduling_settings_get
from apps.srs.settings.memory_models import card_configs_get

# Learning steps due within this window are shown now, as Anki does, so a short session can finish.
LEARN_AHEAD = timedelta(minutes=20)
DEFAULT_STUDY_LIMIT = 50
MAX_STUDY_LIMIT = 200
# The new-card count shown is capped here rather than counting a huge deck every request.
MAX_NEW_COUNTED = 1000


@dataclass(frozen=True, slots=True)
class StudyCard:
    """A card as the study queue shows it: the columns a learner sees, read without a model instance."""

    id: int
    slug: str
    term: str
    definition: str
    example: str
    code: str
    format: str
    tags: Any
    anki_guid: str

    @property
    def pk(self) -> int:
        return self.id


@dataclass(frozen=True)
class StudyItem:
    card: StudyCard
    state: MemoryState | None  # None for a new card
    queue: str  # "learning", "review" or "new"
    next_intervals: dict[Rating, timedelta]
    recall: CardRecall


@dataclass(frozen=True)
class StudyQueue:
    deck: str
    items: list[StudyItem]
    day_start: datetime
    day_end: datetime
    new_left_today: int
    reviews_left_today: int
    learning_due: int
    reviews_due: int
    new_due: int


# The queue is read in hand-written SQL: built and compiled by the
# ORM, its two statements cost several times what running them does. Values travel as parameters;
# only table and column names, the stage numbers and the deck's visibility (compiled by the ORM) are
# formatted into the text.
_TABLES = {
    "card": Card._meta.db_table,
    "memory": CardMemory._meta.db_table,
    "review_log": ReviewLog._meta.db_table,
    "deck": Deck._meta.db_table,
}
_STAGES = {
    "learning_stages": f"{int(MemoryStage.LEARNING)}, {int(MemoryStage.RELEARNING)}",
    "review_stage": int(MemoryStage.REVIEW),
}
# A learner's memories of a deck's cards that a session may show (parameters: the deck where {deck_id} is
# one, the learner); then those due now: (re)learning cards within LEARN_AHEAD of their step (parameter:
# that time), and reviews due before the learner's day ends (parameter: its end).
_STUDYABLE = (
    "{memory} AS memory INNER JOIN {card} AS card ON card.id = memory.card_id"
    " WHERE card.deck_id = {deck_id} AND memory.learner_id = %s AND NOT card.archived AND NOT memory.suspended"
)
_LEARNING_DUE = "memory.stage IN ({learning_stages}) AND memory.due <= %s"
_REVIEW_DUE = "memory.stage = {review_stage} AND memory.due < %s"
# A deck's cards the learner has no memory of (parameters: as above).
_NEW = (
    "{card} AS card WHERE card.deck_id = {deck_id} AND NOT card.archived"
    " AND NOT EXISTS (SELECT 1 FROM {memory} AS memory WHERE memory.card_id = card.id AND memory.learner_id = %s)"
)
# The learner's reviews of the deck's cards in their day (parameters: learner, kind, start, end), less undone ones.
_DONE_TODAY = """SELECT COUNT(*) FROM {review_log} AS log INNER JOIN {card} AS card ON card.id = log.card_id
        WHERE log.learner_id = %s AND card.deck_id = deck.id AND log.kind = %s
            AND log.reviewed_at >= %s AND log.reviewed_at < %s
            AND NOT EXISTS (SELECT 1 FROM {review_log} AS undo WHERE undo.undo_of_id = log.id)"""
# Whether a review's card was in the review stage before it (parameter: the stage as JSON).
_WAS_IN_REVIEW = "(log.state_before -> 'stage') = %s::jsonb"
# The deck that {deck_filter} picks, with today's counts (parameters: as each part says; then how many new
# cards to count at most; then the filter's).
_COUNTS = """
SELECT deck.id, deck.slug,
    ({done_today} AND log.state_before IS NULL) AS new_done,
    ({done_today} AND {was_in_review}) AS reviews_done,
    (SELECT COUNT(*) FROM {studyable} AND {learning_due}) AS learning_due,
    (SELECT COUNT(*) FROM {studyable} AND {review_due}) AS reviews_due,
    (SELECT COUNT(*) FROM (SELECT 1 FROM {new} LIMIT %s) AS counted) AS new_count
FROM {deck} AS deck
WHERE {deck_filter}
"""

_CARD_COLUMNS = {field.name: field for field in Card._meta.concrete_fields}
_MEMORY_COLUMNS = {field.name: field for field in CardMemory._meta.concrete_fields}
# Read as memory_state_of reads a stored row.
_STATE_FIELDS = ("stage", "step", "stability", "difficulty", "due", "last_review", "reps", "lapses")
# A row of the cards shown: the card, its position, the memory's state, the memory's id (None: a new card).
_ROW_FIELDS = [
    *(_CARD_COLUMNS[name] for name in StudyCard.__dataclass_fields__),
    _CARD_COLUMNS["position"],
    *(_MEMORY_COLUMNS[name] for name in _STATE_FIELDS),
    _MEMORY_COLUMNS["id"],
]
_POSITION = len(StudyCard.__dataclass_fields__)
_STATE = slice(_POSITION + 1, _POSITION + 1 + len(_STATE_FIELDS))
_DUE = _POSITION + 1 + _STATE_FIELDS.index("due")
_MEMORY_ID = _STATE.stop
# Each queue's first cards in its order (parameters: as each part says; then how many). The parts of a
# UNION ALL come back in no set order.
_CARDS = """
SELECT * FROM (SELECT {columns} FROM {studyable} AND {learning_due}
    ORDER BY memory.due, memory.id LIMIT %s) AS learning_cards
UNION ALL
SELECT * FROM (SELECT {columns} FROM {studyable} AND {review_due}
    ORDER BY memory.due, memory.id LIMIT %s) AS review_cards
UNION ALL
SELECT * FROM (SELECT {new_columns} FROM {new} ORDER BY card.position LIMIT %s) AS new_cards
"""


@cache
def _cards_sql() -> str:
    """`_CARDS`, with the null memory columns of new cards typed as the memory table's."""
    card_columns = [f"card.{field.column}" for field in _ROW_FIELDS if field.model is Card]
    memory_fields = [field for field in _ROW_FIELDS if field.model is CardMemory]
    return _CARDS.format(
        columns=", ".join([*card_columns, *(f"memory.{field.column}" for field in memory_fields)]),
        new_columns=", ".join(
            [*card_columns, *(f"CAST(NULL AS {field.cast_db_type(connection)})" for field in memory_fields)]
        ),
        studyable=_STUDYABLE.format(deck_id="%s", **_TABLES),
        new=_NEW.format(deck_id="%s", **_TABLES),
        learning_due=_LEARNING_DUE.format(**_STAGES),
        review_due=_REVIEW_DUE.format(**_STAGES),
    )


def _counts_sql(*, deck_filter: str) -> str:
    """`_COUNTS` for the deck `deck_filter` picks."""
    return _COUNTS.format(
        done_today=_DONE_TODAY.format(**_TABLES),
        was_in_review=_WAS_IN_REVIEW,
        studyable=_STUDYABLE.format(deck_id="deck.id", **_TABLES),
        new=_NEW.format(deck_id="deck.id", **_TABLES),
        learning_due=_LEARNING_DUE.format(**_STAGES),
        review_due=_REVIEW_DUE.format(**_STAGES),
        deck_filter=deck_filter,
        **_TABLES,
    )


def study_queue_get(*, learner: Any, deck: Deck, now: datetime, limit: int = DEFAULT_STUDY_LIMIT) -> StudyQueue:
    """Cards to study now in `deck`, as `deck_study_queue_get` gives them for a deck a learner may study."""
    return _study_queue(learner=learner, deck_filter=("deck.id = %s", (deck.pk,)), now=now, limit=limit)


def deck_study_queue_get(*, learner: Any, slug: str, now: datetime, limit: int = DEFAULT_STUDY_LIMIT) -> StudyQueue:
    """Cards to study now: due (re)learning cards, then due reviews, then new cards within today's limits.

    Limits count in the learner's own day (their timezone and day-start hour), per deck. Http404 when
    no deck a learner may see has this slug.
    """
    return _study_queue(learner=learner, deck_filter=_visible_deck_filter(slug), now=now, limit=limit)


@lru_cache(maxsize=1024)
def _visible_deck_filter(slug: str) -> tuple[str, tuple[Any, ...]]:
    """The decks a learner may see, as `decks_visible` says, with this slug: compiled once per slug."""
    sql, params = decks_visible().filter(slug=slug).values("pk").query.sql_with_params()
    return f"deck.id IN ({sql})", tuple(params)


def _study_queue(*, learner: Any, deck_filter: tuple[str, Sequence[Any]], now: datetime, limit: int) -> StudyQueue:
    """Three statements whatever the deck and history: the deck with every count, the cards shown, due counts."""
    settings = scheduling_settings_get(learner=learner)
    configs = card_configs_get(learner=learner, settings=settings)
    day_start, day_end = learner_day_bounds(settings, now=now)
    learning_until, day_start_value, day_end_value = (
        connection.ops.adapt_datetimefield_value(moment) for moment in (now + LEARN_AHEAD, day_start, day_end)
    )
    # No more new cards can be due than a whole day allows, so counting stops there.
    new_counted = min(settings.new_cards_per_day, MAX_NEW_COUNTED)
    done_today = (learner.pk, ReviewKind.REVIEW, day_start_value, day_end_value)
    found = _fetch(
        _counts_sql(deck_filter=deck_filter[0]),
        [
            *done_today,
            *done_today,
            json.dumps(_STAGES["review_stage"]),
            *(learner.pk, learning_until),
            *(learner.pk, day_end_value),
            *(learner.pk, new_counted),
            *deck_filter[1],
        ],
    )
    if not found:
        raise Http404
    ((deck_id, deck_slug, new_done, reviews_done, learning_due, reviews_due, new_count),) = found
    new_left = max(0, settings.new_cards_per_day - new_done)
    reviews_left = max(0, settings.max_reviews_per_day - reviews_done)
    new_due = min(new_count, new_left)

    # Learning cards are never held back by the review limit: stopping mid-steps would waste them.
    learning_shown = min(learning_due, limit)
    reviews_shown = min(reviews_due, reviews_left, limit - learning_shown)
    new_shown = min(new_due, limit - learning_shown - reviews_shown)
    rows = (
        _fetch(
            _cards_sql(),
            [
                *(deck_id, learner.pk, learning_until, learning_shown),
                *(deck_id, learner.pk, day_end_value, reviews_shown),
                *(deck_id, learner.pk, new_shown),
            ],
            fields=_ROW_FIELDS,
        )
        if learning_shown + reviews_shown + new_shown
        else []
    )
    rows.sort(key=_queue_order)

    states = {
        row[0]: memory_state_of(CardMemory.from_db(None, _STATE_FIELDS, row[_STATE]))
        if row[_MEMORY_ID] is not None
        else None
        for row in rows
    }
    # Load balanced as the reviews will be: one read of the learner's due counts for every card shown.
    next_intervals = next_intervals_preview(
        learner_id=learner.pk, settings=settings, configs=configs, now=now, states=states
    )
    recall_basis = RecallBasis(configs=configs, now=now)
    return StudyQueue(
        deck=deck_slug,
        items=[
            StudyItem(
                card=StudyCard(*row[:_POSITION]),
                state=states[row[0]],
                queue=_queue_of(states[row[0]]),
                next_intervals=next_intervals[row[0]],
                recall=recall_basis.of_state(states[row[0]], card_id=row[0]),
            )
            for row in rows
        ],
        day_start=day_start,
        day_end=day_end,
        new_left_today=new_left,
        reviews_left_today=reviews_left,
        learning_due=learning_due,
        reviews_due=reviews_due,
        new_due=new_due,
    )


def _fetch(sql: str, params: Sequence[Any], *, fields: Sequence[Any] = ()) -> list[list[Any]]:
    """The rows of `sql`, each column converted as the ORM converts a value of the model field in `fields`."""
    # Prepared: PostgreSQL would otherwise plan these statements anew on every request.
    with prepared_cursor(connection) as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return rows_converted(rows, fields, connection=connection)


def _queue_order(row: list[Any]) -> tuple[Any, ...]:
    """Learning, then reviews, each in due order (ties by memory id); then new cards in deck order."""
    if row[_MEMORY_ID] is None:
        return (2, row[_POSITION])
    return (int(row[_STATE][0] == MemoryStage.REVIEW), row[_DUE], row[_MEMORY_ID])


def _queue_of(state: MemoryState | None) -> str:
    if state is None:
        return "new"
    return "review" if state.stage == MemoryStage.REVIEW else "learning"
