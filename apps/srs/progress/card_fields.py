"""The card browser's fields of a learner's memory and reviews of one card: pure mappers from rows."""

from __future__ import annotations

from typing import Any

from apps.common.clock import time_text
from apps.srs.core.scheduling import MemoryStage, MemoryState
from apps.srs.models import CardMemory, ReviewLog
from apps.srs.reviews.memory import memory_state_of, memory_state_store
from apps.srs.reviews.recall import RecallBasis
from apps.srs.reviews.serializers import recall_fields

SECONDS_PER_DAY = 86_400.0


def stage_name(stage: int | None) -> str:
    return "new" if stage is None else MemoryStage(stage).name.lower()


def browsed_memory_fields(memory: CardMemory | None, basis: RecallBasis, *, card_id: int) -> dict[str, Any]:
    """The learner's memory of a card as the browser lists it; a new card (no row) has no due time nor recall."""
    recall = recall_fields(basis.of_memory(memory, card_id=card_id))
    if memory is None:
        return {
            "stage": "new",
            "due": None,
            "is_due": False,
            "reviews": 0,
            "lapses": 0,
            "is_leech": False,
            "suspended": False,
            "last_review": None,
            **recall,
        }
    return {
        "stage": stage_name(memory.stage),
        "due": time_text(memory.due),
        "is_due": memory.due <= basis.now and not memory.suspended,
        "reviews": memory.reps,
        "lapses": memory.lapses,
        "is_leech": memory.is_leech,
        "suspended": memory.suspended,
        "last_review": time_text(memory.last_review),
        **recall,
    }


def stored_state(data: Any) -> MemoryState | None:
    """A review's stored state as FSRS reads it, each value clamped as a memory row's is (memory_state_of);
    None for no state, or one that cannot be read (an old row, an edit by hand)."""
    if not isinstance(data, dict):
        return None
    try:
        state = MemoryState.from_dict(data)
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
    row = CardMemory()
    memory_state_store(row, state)
    return memory_state_of(row)


def card_review_fields(review: ReviewLog, basis: RecallBasis, *, card_id: int) -> dict[str, Any]:
    """One standing review: what the card was before it, what the model expected, what it set. A stored
    state that cannot be read gives nulls rather than figures it does not hold."""
    before = stored_state(review.state_before)
    after = stored_state(review.state_after)
    unreadable_before = review.state_before is not None and before is None
    expected = RecallBasis(configs=basis.configs, now=review.reviewed_at).of_state(before, card_id=card_id)
    return {
        "id": review.pk,
        "reviewed_at": time_text(review.reviewed_at),
        "rating": review.rating,
        "source": review.source,
        "duration_ms": review.duration_ms,
        "stage_before": None if unreadable_before else stage_name(int(before.stage) if before else None),
        "recall_before": expected.probability,
        "interval_days": (after.due - review.reviewed_at).total_seconds() / SECONDS_PER_DAY if after else None,
        "stability_days": after.stability if after else None,
        "difficulty": after.difficulty if after else None,
    }
