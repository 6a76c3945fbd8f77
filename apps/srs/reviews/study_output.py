"""The study endpoint's response body as plain dicts: what `StudyOutput(...).data` gives, at a fraction of its cost.

`apps.srs.reviews.serializers.StudyOutput` stays the schema of the response; tests hold the two equal.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.srs.reviews.selectors import StudyCard, StudyItem, StudyQueue
from apps.srs.reviews.serializers import MemoryStateOutput, next_intervals_seconds, recall_fields

# Day bounds are rendered as StudyOutput's DateTimeFields render them: in the current time zone, Z for UTC.
_DAY_BOUND = serializers.DateTimeField()
_MEMORY_STATE = MemoryStateOutput()


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def study_card_data(card: StudyCard) -> dict[str, Any]:
    """As DeckCardOutput renders a card."""
    return {
        "id": card.id,
        "slug": _text(card.slug),
        "term": _text(card.term),
        "definition": _text(card.definition),
        "example": _text(card.example),
        "code": _text(card.code),
        "format": _text(card.format),
        "tags": None if card.tags is None else [_text(tag) for tag in card.tags],
        "anki_guid": _text(card.anki_guid),
    }


def study_item_data(item: StudyItem) -> dict[str, Any]:
    """As StudyItemOutput renders an item."""
    return {
        "queue": item.queue,
        "card": study_card_data(item.card),
        "state": _MEMORY_STATE.to_representation(item.state) if item.state else None,
        "next_intervals": next_intervals_seconds(item.next_intervals),
        **recall_fields(item.recall),
    }


def study_data(queue: StudyQueue) -> dict[str, Any]:
    """As StudyOutput renders the queue."""
    return {
        "deck": queue.deck,
        "day_start": _DAY_BOUND.to_representation(queue.day_start),
        "day_end": _DAY_BOUND.to_representation(queue.day_end),
        "counts": {
            "learning_due": queue.learning_due,
            "reviews_due": queue.reviews_due,
            "new_due": queue.new_due,
            "new_left_today": queue.new_left_today,
            "reviews_left_today": queue.reviews_left_today,
        },
        "cards": [study_item_data(item) for item in queue.items],
    }
