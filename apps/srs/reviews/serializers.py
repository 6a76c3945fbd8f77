"""Request and response bodies of the spaced-repetition endpoints."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from rest_framework import serializers

from apps.common.clock import time_text
from apps.common.fields import AwareDateTimeField, CanonicalUUIDField, JSONBooleanField, JSONIntegerField
from apps.common.schema import body_rules
from apps.content.serializers import DeckCardOutput
from apps.srs.core.scheduling import MemoryState, Rating
from apps.srs.reviews.recall import CardRecall
from apps.srs.reviews.services import BATCH_LIMIT, MAX_DURATION_MS

_RATING_NAMES = {rating: rating.name.lower() for rating in Rating}


@body_rules(exactly_one_of=("rating", "knew"))
class ReviewInput(serializers.Serializer):
    card = JSONIntegerField(min_value=1, help_text="Card id.")
    rating = JSONIntegerField(min_value=1, max_value=4, required=False, help_text="1 Again, 2 Hard, 3 Good, 4 Easy.")
    knew = JSONBooleanField(
        required=False, help_text="Flip-and-rate decks may send this instead of rating: true = Good, false = Again."
    )
    duration_ms = JSONIntegerField(min_value=0, max_value=MAX_DURATION_MS, required=False, allow_null=True)
    # The upper bound is the service's, checked against its clock with the card checks, so all are reported together.
    reviewed_at = AwareDateTimeField(
        allow_future=True, required=False, help_text="ISO 8601 with offset; defaults to the server's time of receipt."
    )
    client_review_id = CanonicalUUIDField(
        help_text="Made by the client for this review: resent unchanged it changes nothing; reused for another, 409."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        has_rating, has_knew = "rating" in attrs, "knew" in attrs
        if has_rating == has_knew:
            raise serializers.ValidationError({"rating": ["Send either rating (1-4) or knew (true/false)."]})
        if has_knew:
            attrs["rating"] = int(Rating.GOOD if attrs.pop("knew") else Rating.AGAIN)
        return attrs


class ReviewBatchInput(serializers.Serializer):
    reviews = serializers.ListField(child=ReviewInput(), allow_empty=False, max_length=BATCH_LIMIT)


class MemoryStateOutput(serializers.Serializer):
    stage = serializers.ChoiceField(choices=["learning", "review", "relearning"])
    step = serializers.IntegerField(allow_null=True)
    stability = serializers.FloatField(help_text="Days until recall probability falls to 90%.")
    difficulty = serializers.FloatField(help_text="1 (easy) to 10 (hard).")
    due = serializers.DateTimeField()
    last_review = serializers.DateTimeField()
    reps = serializers.IntegerField()
    lapses = serializers.IntegerField()

    def to_representation(self, state: MemoryState) -> dict[str, Any]:
        return {
            "stage": state.stage.name.lower(),
            "step": state.step,
            "stability": state.stability,
            "difficulty": state.difficulty,
            "due": time_text(state.due),
            "last_review": time_text(state.last_review),
            "reps": state.reps,
            "lapses": state.lapses,
        }


RECALL_PROBABILITY_HELP = (
    "Probability of recalling the card at recall_computed_at (FSRS retrievability under the learner's own "
    "parameters and settings); null for a card never reviewed. Deck and concept mastery are means of it."
)
RECALL_COMPUTED_AT_HELP = "When recall_probability was computed: the time this response was made."


def recall_fields(recall: CardRecall) -> dict[str, Any]:
    """The two recall fields of every card state in a response, from the one mapper (`apps.srs.reviews.recall`)."""
    return {"recall_probability": recall.probability, "recall_computed_at": time_text(recall.computed_at)}


class ReviewOutput(serializers.Serializer):
    id = serializers.IntegerField(help_text="Review id, for undo.")
    card = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["review", "undo"])
    rating = serializers.IntegerField(allow_null=True)
    reviewed_at = serializers.DateTimeField()
    client_review_id = serializers.UUIDField(allow_null=True)
    state = MemoryStateOutput(allow_null=True, help_text="The card's memory now; null when it is new again.")
    due = serializers.DateTimeField(allow_null=True)
    duplicate = serializers.BooleanField(help_text="True when this same review was already recorded.")
    replayed = serializers.BooleanField(help_text="True when the review arrived late and history was replayed.")
    recall_probability = serializers.FloatField(
        allow_null=True, min_value=0, max_value=1, help_text=RECALL_PROBABILITY_HELP
    )
    recall_computed_at = serializers.DateTimeField(help_text=RECALL_COMPUTED_AT_HELP)

    def to_representation(self, outcome: Any) -> dict[str, Any]:
        """`context["recall_basis"]`: the learner's RecallBasis for the card's recall now."""
        log, state = outcome.log, outcome.state
        return {
            "id": log.pk,
            "card": log.card_id,
            "kind": log.kind,
            "rating": log.rating,
            "reviewed_at": time_text(log.reviewed_at),
            "client_review_id": str(log.client_review_id) if log.client_review_id else None,
            "state": MemoryStateOutput(state).data if state else None,
            "due": time_text(state.due) if state else None,
            "duplicate": not outcome.created,
            "replayed": outcome.replayed,
            **recall_fields(self.context["recall_basis"].of_state(state, card_id=log.card_id)),
        }


class ReviewBatchOutput(serializers.Serializer):
    results = ReviewOutput(many=True)


class NextIntervalsOutput(serializers.Serializer):
    again = serializers.IntegerField(help_text="Seconds until due if rated Again now.")
    hard = serializers.IntegerField()
    good = serializers.IntegerField()
    easy = serializers.IntegerField()


def next_intervals_seconds(intervals: dict[Rating, timedelta]) -> dict[str, int]:
    return {_RATING_NAMES[rating]: int(interval.total_seconds()) for rating, interval in intervals.items()}


class StudyItemOutput(serializers.Serializer):
    queue = serializers.ChoiceField(choices=["learning", "review", "new"])
    card = DeckCardOutput()
    state = MemoryStateOutput(allow_null=True)
    next_intervals = NextIntervalsOutput()
    recall_probability = serializers.FloatField(
        allow_null=True, min_value=0, max_value=1, help_text=RECALL_PROBABILITY_HELP
    )
    recall_computed_at = serializers.DateTimeField(help_text=RECALL_COMPUTED_AT_HELP)

    def to_representation(self, item: Any) -> dict[str, Any]:
        """`item`: a StudyItem of `apps.srs.reviews.selectors`; the endpoint maps it with `study_output`."""
        return {
            "queue": item.queue,
            "card": self.card_data(item.card),
            "state": MemoryStateOutput(item.state).data if item.state else None,
            "next_intervals": next_intervals_seconds(item.next_intervals),
            **recall_fields(item.recall),
        }

    def card_data(self, card: Any) -> dict[str, Any]:
        # One card serializer for the whole list: building one per card cost a third of the request.
        if "card_output" not in self.context:
            self.context["card_output"] = DeckCardOutput()
        return dict(self.context["card_output"].to_representation(card))


class StudyCountsOutput(serializers.Serializer):
    learning_due = serializers.IntegerField()
    reviews_due = serializers.IntegerField()
    new_due = serializers.IntegerField(help_text="New cards that today's limit still allows.")
    new_left_today = serializers.IntegerField()
    reviews_left_today = serializers.IntegerField()


class StudyOutput(serializers.Serializer):
    deck = serializers.CharField()
    day_start = serializers.DateTimeField()
    day_end = serializers.DateTimeField()
    counts = StudyCountsOutput()
    cards = StudyItemOutput(many=True)
