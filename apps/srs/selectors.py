"""Reads of learners' memory: the study queue, with what each rating would do."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, Exists, OuterRef, Q

from apps.content.models import Card, Deck
from apps.srs.config import learner_day_bounds, scheduler_config_from_settings, scheduling_settings_get
from apps.srs.due_load import next_intervals_preview
from apps.srs.memory import memory_state_of
from apps.srs.models import CardMemory, ReviewKind, ReviewLog
from apps.srs.recall import CardRecall, RecallBasis
from apps.srs.scheduling import MemoryStage, Rating

# Learning steps due within this window are shown now, as Anki does, so a short session can finish.
LEARN_AHEAD = timedelta(minutes=20)
DEFAULT_STUDY_LIMIT = 50
MAX_STUDY_LIMIT = 200
# The new-card count shown is capped here rather than counting a huge deck every request.
MAX_NEW_COUNTED = 1000


@dataclass(frozen=True)
class StudyItem:
    card: Card
    memory: CardMemory | None
    queue: str  # "learning", "review" or "new"
    next_intervals: dict[Rating, timedelta]
    recall: CardRecall


@dataclass(frozen=True)
class StudyQueue:
    items: list[StudyItem]
    day_start: datetime
    day_end: datetime
    new_left_today: int
    reviews_left_today: int
    learning_due: int
    reviews_due: int
    new_due: int


def study_queue_get(*, learner: Any, deck: Deck, now: datetime, limit: int = DEFAULT_STUDY_LIMIT) -> StudyQueue:
    """Cards to study now: due (re)learning cards, then due reviews, then new cards within today's limits.

    Limits count in the learner's own day (their timezone and day-start hour), per deck.
    """
    settings = scheduling_settings_get(learner=learner)
    config = scheduler_config_from_settings(settings)
    day_start, day_end = learner_day_bounds(settings, now=now)

    done_today = ReviewLog.objects.filter(
        learner=learner,
        card__deck=deck,
        kind=ReviewKind.REVIEW,
        undone_by__isnull=True,
        reviewed_at__gte=day_start,
        reviewed_at__lt=day_end,
    ).aggregate(
        new=Count("pk", filter=Q(state_before__isnull=True)),
        reviews=Count("pk", filter=Q(state_before__stage=int(MemoryStage.REVIEW))),
    )
    new_left = max(0, settings.new_cards_per_day - done_today["new"])
    reviews_left = max(0, settings.max_reviews_per_day - done_today["reviews"])

    studyable = CardMemory.objects.filter(learner=learner, card__deck=deck, card__archived=False, suspended=False)
    learning_filter = Q(stage__in=[MemoryStage.LEARNING, MemoryStage.RELEARNING], due__lte=now + LEARN_AHEAD)
    review_filter = Q(stage=MemoryStage.REVIEW, due__lt=day_end)
    counts = studyable.aggregate(
        learning=Count("pk", filter=learning_filter), reviews=Count("pk", filter=review_filter)
    )
    new_cards = Card.objects.filter(deck=deck, archived=False).exclude(
        Exists(CardMemory.objects.filter(learner=learner, card=OuterRef("pk")))
    )

    # Learning cards are never held back by the review limit: stopping mid-steps would waste them.
    learning = list(studyable.filter(learning_filter).select_related("card").order_by("due", "pk")[:limit])
    review_quota = min(reviews_left, limit - len(learning))
    reviews = (
        list(studyable.filter(review_filter).select_related("card").order_by("due", "pk")[:review_quota])
        if review_quota > 0
        else []
    )
    # New cards still allowed today, fetched once: the first ones are studied, all of them are counted.
    new_allowed = list(new_cards.order_by("position")[: min(new_left, MAX_NEW_COUNTED)]) if new_left else []
    fresh = new_allowed[: max(0, limit - len(learning) - len(reviews))]

    recall_basis = RecallBasis(config=config, now=now)
    # Load balanced as the reviews will be: one read of the learner's due counts for every card shown.
    next_intervals = next_intervals_preview(
        learner_id=learner.pk,
        settings=settings,
        config=config,
        now=now,
        states={m.card_id: memory_state_of(m) for m in (*learning, *reviews)} | dict.fromkeys(c.pk for c in fresh),
    )
    items = [
        StudyItem(
            m.card,
            m,
            queue,
            next_intervals[m.card_id],
            recall=recall_basis.of_memory(m),
        )
        for queue, memories in (("learning", learning), ("review", reviews))
        for m in memories
    ]
    items += [
        StudyItem(
            card,
            None,
            "new",
            next_intervals[card.pk],
            recall=recall_basis.of_state(None),
        )
        for card in fresh
    ]
    return StudyQueue(
        items=items,
        day_start=day_start,
        day_end=day_end,
        new_left_today=new_left,
        reviews_left_today=reviews_left,
        learning_due=counts["learning"],
        reviews_due=counts["reviews"],
        new_due=len(new_allowed),
    )
