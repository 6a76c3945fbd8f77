"""Request and response bodies of a learner's settings, deck passes, leeches and statistics."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fsrs.scheduler import LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS
from rest_framework import serializers

from apps.common.fields import (
    BIGINT_MAX,
    AwareDateTimeField,
    CanonicalUUIDField,
    JSONBooleanField,
    JSONIntegerField,
    JSONNumberField,
    SingleLineCharField,
)
from apps.common.schema import body_rules
from apps.content.serializers import DeckCardOutput
from apps.srs.config import scheduler_config_from_settings
from apps.srs.learner_settings import (
    DAY_START_HOUR_RANGE,
    LEARNING_STEP_LIMIT_SECONDS,
    LEECH_THRESHOLD_RANGE,
    MAX_REVIEWS_PER_DAY_RANGE,
    MAX_STEPS,
    MAXIMUM_INTERVAL_RANGE,
    NEW_CARDS_PER_DAY_RANGE,
    RETENTION_RANGE,
    SETTINGS_FIELDS,
    TIME_ZONE_NAME_PATTERN,
)
from apps.srs.models import DeckPass, SchedulingSettings
from apps.srs.scheduling import DEFAULT_PARAMETERS, MemoryStage

_MILLISECOND = timedelta(milliseconds=1)


def _range(bounds: tuple[Any, Any]) -> str:
    return f"{bounds[0]} to {bounds[1]}"


def _steps_keywords(*, longest_seconds: int) -> dict[str, Any]:
    # "Ascending" has no JSON Schema keyword; distinct items is the part of it a schema can say.
    return {
        "minItems": 1,
        "maxItems": MAX_STEPS,
        "uniqueItems": True,
        "items": {"minimum": 1, "maximum": longest_seconds},
    }


# What learner_settings checks of each setting, for the schema of every body that carries it.
SETTINGS_KEYWORDS: dict[str, dict[str, Any]] = {
    # The zone names themselves are not an enum: the list follows the host's tz database, and names
    # such as Etc/GMT+1 and Etc/GMT-1 collide when client generators turn enum values into identifiers.
    "timezone": {"pattern": TIME_ZONE_NAME_PATTERN, "maxLength": 64},
    "learning_steps": _steps_keywords(longest_seconds=LEARNING_STEP_LIMIT_SECONDS - 1),
    "relearning_steps": _steps_keywords(longest_seconds=MAXIMUM_INTERVAL_RANGE[1] * 24 * 3600),
    # The bounds fsrs.Scheduler checks each weight against (parameters_valid).
    "fsrs_parameters": {
        "minItems": len(DEFAULT_PARAMETERS),
        "maxItems": len(DEFAULT_PARAMETERS),
        "prefixItems": [
            {"type": "number", "minimum": low, "maximum": high}
            for low, high in zip(LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS, strict=True)
        ],
    },
}


# --- Settings ----------------------------------------------------------------------------------


@body_rules(
    closed=True,
    ranges={
        "desired_retention": RETENTION_RANGE,
        "maximum_interval_days": MAXIMUM_INTERVAL_RANGE,
        "new_cards_per_day": NEW_CARDS_PER_DAY_RANGE,
        "max_reviews_per_day": MAX_REVIEWS_PER_DAY_RANGE,
        "day_start_hour": DAY_START_HOUR_RANGE,
        "leech_threshold": LEECH_THRESHOLD_RANGE,
    },
    keywords=SETTINGS_KEYWORDS,
)
class SchedulingSettingsInput(serializers.Serializer):
    """Types only: the ranges and the rules between fields are the service's."""

    desired_retention = JSONNumberField(
        required=False, help_text=f"Target probability of recall at review, {_range(RETENTION_RANGE)}."
    )
    learning_steps = serializers.ListField(
        child=JSONIntegerField(),
        required=False,
        help_text=f"1 to {MAX_STEPS} steps in seconds, ascending, each under a day.",
    )
    relearning_steps = serializers.ListField(
        child=JSONIntegerField(),
        required=False,
        help_text=f"1 to {MAX_STEPS} steps in seconds, ascending, none beyond maximum_interval_days.",
    )
    maximum_interval_days = JSONIntegerField(required=False, help_text=_range(MAXIMUM_INTERVAL_RANGE))
    new_cards_per_day = JSONIntegerField(required=False, help_text=_range(NEW_CARDS_PER_DAY_RANGE))
    max_reviews_per_day = JSONIntegerField(required=False, help_text=_range(MAX_REVIEWS_PER_DAY_RANGE))
    timezone = SingleLineCharField(
        required=False, help_text="A name the tz database holds, e.g. Europe/Paris; other names are a 400."
    )
    day_start_hour = JSONIntegerField(
        required=False, help_text=f"Local hour at which the learner's day starts, {_range(DAY_START_HOUR_RANGE)}."
    )
    fsrs_parameters = serializers.ListField(
        child=JSONNumberField(),
        required=False,
        allow_null=True,
        help_text=f"{len(DEFAULT_PARAMETERS)} FSRS weights from an optimizer run; null for the defaults.",
    )
    leech_threshold = JSONIntegerField(
        required=False, help_text=f"Lapses after which a card is a leech, {_range(LEECH_THRESHOLD_RANGE)}."
    )
    suspend_leeches = JSONBooleanField(required=False, help_text="Suspend a card when it becomes a leech.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # A misspelt setting would otherwise be dropped silently and look as if it were saved.
        initial = self.initial_data if isinstance(self.initial_data, dict) else {}
        unknown = sorted(set(initial) - set(SETTINGS_FIELDS))
        if unknown:
            raise serializers.ValidationError({name: ["No such setting."] for name in unknown})
        return attrs


class SchedulingSettingsOutput(serializers.Serializer):
    desired_retention = serializers.FloatField()
    learning_steps = serializers.ListField(child=serializers.IntegerField(), help_text="Seconds.")
    relearning_steps = serializers.ListField(child=serializers.IntegerField(), help_text="Seconds.")
    maximum_interval_days = serializers.IntegerField()
    new_cards_per_day = serializers.IntegerField()
    max_reviews_per_day = serializers.IntegerField()
    timezone = serializers.CharField()
    day_start_hour = serializers.IntegerField()
    fsrs_parameters = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, help_text="The learner's own weights; null for the defaults."
    )
    fsrs_parameters_in_use = serializers.ListField(
        child=serializers.FloatField(), help_text="The weights the next review is scheduled with."
    )
    leech_threshold = serializers.IntegerField()
    suspend_leeches = serializers.BooleanField()
    updated_at = serializers.DateTimeField(allow_null=True, help_text="Null until the learner changes a setting.")

    def to_representation(self, settings: SchedulingSettings) -> dict[str, Any]:
        data = {name: getattr(settings, name) for name in SETTINGS_FIELDS}
        data["fsrs_parameters_in_use"] = list(scheduler_config_from_settings(settings).parameters)
        data["updated_at"] = settings.updated_at.isoformat() if settings.pk and settings.updated_at else None
        return data


# --- Deck passes -------------------------------------------------------------------------------


@body_rules(ranges={"known": (0, BIGINT_MAX), "total": (1, BIGINT_MAX)})
class DeckPassInput(serializers.Serializer):
    known = JSONIntegerField(help_text="Cards known in this pass; from 0 to total.")
    total = JSONIntegerField(
        help_text="Cards in this pass; at least 1, at most the deck's cards that are not archived (those "
        "GET /decks/{slug}/cards/ lists)."
    )
    # The upper bound is the service's, checked with the deck's rules so that all are reported together.
    started_at = AwareDateTimeField(allow_future=True, help_text="ISO 8601 with offset.")
    finished_at = AwareDateTimeField(allow_future=True, help_text="ISO 8601 with offset; not before started_at.")
    client_pass_id = CanonicalUUIDField(
        help_text="Made by the client for this pass: resent unchanged it changes nothing; reused for another pass, 409."
    )


class DeckPassOutput(serializers.Serializer):
    id = serializers.IntegerField()
    deck = serializers.CharField(source="deck.slug")
    deck_title = serializers.CharField(source="deck.title")
    known = serializers.IntegerField()
    total = serializers.IntegerField()
    score = serializers.FloatField(help_text="known / total, from 0 to 1.")
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField()
    duration_ms = serializers.IntegerField()
    client_pass_id = serializers.UUIDField()
    recorded_at = serializers.DateTimeField()

    def to_representation(self, deck_pass: DeckPass) -> dict[str, Any]:
        duration = deck_pass.finished_at - deck_pass.started_at
        return {
            "id": deck_pass.pk,
            "deck": deck_pass.deck.slug,
            "deck_title": deck_pass.deck.title,
            "known": deck_pass.known,
            "total": deck_pass.total,
            "score": deck_pass.known / deck_pass.total,
            "started_at": deck_pass.started_at.isoformat(),
            "finished_at": deck_pass.finished_at.isoformat(),
            "duration_ms": duration // _MILLISECOND,
            "client_pass_id": str(deck_pass.client_pass_id),
            "recorded_at": deck_pass.recorded_at.isoformat(),
        }


class DeckPassBestOutput(DeckPassOutput):
    passes_count = serializers.IntegerField(help_text="The learner's passes of this deck.")

    def to_representation(self, deck_pass: DeckPass) -> dict[str, Any]:
        return super().to_representation(deck_pass) | {"passes_count": deck_pass.passes_count}  # type: ignore[attr-defined]


class DeckPassBestListOutput(serializers.Serializer):
    results = DeckPassBestOutput(many=True, help_text="One per deck the learner has passed, by deck title.")


# --- Leeches -----------------------------------------------------------------------------------


class LeechOutput(serializers.Serializer):
    card = DeckCardOutput()
    deck = serializers.CharField(source="card.deck.slug")
    lapses = serializers.IntegerField()
    suspended = serializers.BooleanField()
    stage = serializers.ChoiceField(choices=[stage.name.lower() for stage in MemoryStage])
    due = serializers.DateTimeField()

    def to_representation(self, memory: Any) -> dict[str, Any]:
        return {
            "card": DeckCardOutput(memory.card).data,
            "deck": memory.card.deck.slug,
            "lapses": memory.lapses,
            "suspended": memory.suspended,
            "stage": MemoryStage(memory.stage).name.lower(),
            "due": memory.due.isoformat(),
        }


# --- Statistics --------------------------------------------------------------------------------


class DayCountOutput(serializers.Serializer):
    date = serializers.DateField(source="day", help_text="A learner-local day.")
    count = serializers.IntegerField()


class RetentionOutput(serializers.Serializer):
    start = serializers.DateField(help_text="First learner-local day of the week (a Monday) or month.")
    reviews = serializers.IntegerField(help_text="Reviews of cards that were in the review stage.")
    passed = serializers.IntegerField(help_text="Of those, the ones not rated Again.")
    retention = serializers.FloatField(allow_null=True, help_text="passed / reviews; null without reviews.")


class StreakOutput(serializers.Serializer):
    current = serializers.IntegerField(help_text="Days in a row with a review, up to today or yesterday.")
    longest = serializers.IntegerField()


class DeckStateCountsOutput(serializers.Serializer):
    new = serializers.IntegerField()
    learning = serializers.IntegerField()
    review = serializers.IntegerField()
    relearning = serializers.IntegerField()
    suspended = serializers.IntegerField()


class DeckStatsOutput(serializers.Serializer):
    deck = serializers.CharField(source="deck.slug")
    title = serializers.CharField(source="deck.title")
    total = serializers.IntegerField(help_text="Cards in the deck.")
    counts = DeckStateCountsOutput(source="*")
    mastery = serializers.FloatField(help_text="Mean probability of recall now over the deck's cards; new count 0.")


class StatsOutput(serializers.Serializer):
    today = serializers.DateField(help_text="The learner-local day now.")
    day_start = serializers.DateTimeField()
    day_end = serializers.DateTimeField()
    timezone = serializers.CharField()
    due_forecast = DayCountOutput(many=True, help_text="The next 30 days; today includes overdue cards.")
    reviews_per_day = DayCountOutput(many=True, help_text="The last 365 days, only days with reviews.")
    retention_by_week = RetentionOutput(many=True, help_text="The last 52 weeks, oldest first.")
    retention_by_month = RetentionOutput(many=True, help_text="The last 12 months, oldest first.")
    streak = StreakOutput()
    decks = DeckStatsOutput(many=True)
