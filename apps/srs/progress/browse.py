"""The card browser: every card of a course a learner can study, with their memory of it, searched and
filtered; and one card's history of reviews. Reads only."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from django.db.models import F, FilteredRelation, Prefetch, Q, QuerySet

from apps.common.errors import NotFound
from apps.common.fields import BIGINT_MAX
from apps.content.models import Card, Concept, Course
from apps.srs.core.scheduling import MemoryStage
from apps.srs.models import CardMemory, ReviewLog


class CardState(StrEnum):
    """What the browser filters by. A card is in one stage (new, learning, review, relearning) and may
    also be due, a leech or suspended."""

    NEW = "new"
    LEARNING = "learning"
    REVIEW = "review"
    RELEARNING = "relearning"
    DUE = "due"
    LEECH = "leech"
    SUSPENDED = "suspended"


class CardOrder(StrEnum):
    COURSE = "course"
    DUE = "due"
    LAPSES = "lapses"
    RECENT = "recent"


@dataclass(frozen=True)
class CardSearch:
    text: str = ""
    state: CardState | None = None
    concept: str | None = None
    deck: str | None = None
    order: CardOrder = CardOrder.COURSE


_STAGE_OF_STATE = {
    CardState.LEARNING: MemoryStage.LEARNING,
    CardState.REVIEW: MemoryStage.REVIEW,
    CardState.RELEARNING: MemoryStage.RELEARNING,
}


def _course_of(slug: str) -> Course:
    course = Course.objects.filter(slug=slug, archived=False).first()
    if course is None:
        raise NotFound(f"There is no course {slug}.")
    return course


def _state_filter(state: CardState, now: datetime) -> Q:
    if state is CardState.NEW:
        return Q(mine__id__isnull=True)
    if state is CardState.DUE:
        return Q(mine__due__lte=now, mine__suspended=False)
    if state is CardState.LEECH:
        return Q(mine__is_leech=True)
    if state is CardState.SUSPENDED:
        return Q(mine__suspended=True)
    return Q(mine__stage=int(_STAGE_OF_STATE[state]))


def _text_filter(text: str) -> Q:
    """Every word somewhere in the card: its term, definition, example, code or tags."""
    found = Q()
    for word in text.split():
        found &= (
            Q(term__icontains=word)
            | Q(definition__icontains=word)
            | Q(example__icontains=word)
            | Q(code__icontains=word)
            | Q(tags__icontains=word)
        )
    return found


_ORDERINGS: dict[CardOrder, tuple[Any, ...]] = {
    CardOrder.COURSE: ("deck__lesson__position", "deck__position", "position"),
    CardOrder.DUE: (F("mine__due").asc(nulls_last=True), "deck__lesson__position", "deck__position", "position"),
    CardOrder.LAPSES: (F("mine__lapses").desc(nulls_last=True), "deck__lesson__position", "deck__position", "position"),
    CardOrder.RECENT: (
        F("mine__last_review").desc(nulls_last=True),
        "deck__lesson__position",
        "deck__position",
        "position",
    ),
}


def course_cards_browse(*, learner: Any, course_slug: str, search: CardSearch, now: datetime) -> QuerySet[Card]:
    """The course's cards the learner can study that match `search`, each with `learner_memories` (the
    learner's memory row, or none: a new card) and its concepts in the course.

    A filter that names no deck or concept of the course matches nothing, like every filter of this API.
    """
    course = _course_of(course_slug)
    cards = (
        Card.objects.visible()
        .filter(deck__lesson__course=course)
        .annotate(mine=FilteredRelation("memories", condition=Q(memories__learner=learner)))
        .select_related("deck")
        .prefetch_related(
            Prefetch("memories", queryset=CardMemory.objects.filter(learner=learner), to_attr="learner_memories"),
            Prefetch(
                "concepts",
                queryset=Concept.objects.filter(course=course, archived=False).order_by("position"),
                to_attr="course_concepts",
            ),
        )
    )
    if search.text:
        cards = cards.filter(_text_filter(search.text))
    if search.state is not None:
        cards = cards.filter(_state_filter(search.state, now))
    if search.deck is not None:
        cards = cards.filter(deck__slug=search.deck)
    if search.concept is not None:
        cards = cards.filter(concepts__slug=search.concept, concepts__course=course, concepts__archived=False)
    return cards.order_by(*_ORDERINGS[search.order], "pk")


@dataclass(frozen=True)
class CardHistory:
    card: Card
    concepts: list[Concept]
    memory: CardMemory | None
    reviews: list[ReviewLog]


def card_history_get(*, learner: Any, card_id: int) -> CardHistory:
    """A card the learner can study, their memory of it and their standing reviews of it, oldest first."""
    card = (
        Card.objects.visible().select_related("deck__lesson").filter(pk=card_id).first()
        if 1 <= card_id <= BIGINT_MAX
        else None
    )
    if card is None:
        raise NotFound(f"There is no card {card_id}.")
    concepts = list(card.concepts.filter(course_id=card.deck.lesson.course_id, archived=False).order_by("position"))
    memory = CardMemory.objects.filter(learner=learner, card=card).first()
    reviews = list(ReviewLog.objects.standing().filter(learner=learner, card=card).order_by("reviewed_at", "pk"))
    return CardHistory(card=card, concepts=concepts, memory=memory, reviews=reviews)
