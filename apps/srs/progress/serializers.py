"""Request and response bodies of a learner's settings, deck passes, leeches and statistics."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fsrs.scheduler import LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS
from rest_framework import serializers

from apps.common.clock import time_text
from apps.common.fields import (
    BIGINT_MAX,
    AwareDateTimeField,
    CanonicalUUIDField,
    JSONBooleanField,
    JSONIntegerField,
    JSONNumberField,
    SingleLineCharField,
)
from apps.common.jobs import JobStatus
from apps.common.schema import body_rules
from apps.content.serializers import DeckCardOutput
from apps.srs.adaptation.optimization import PARAMETER_FITS_SHOWN
from apps.srs.adaptation.serializers import CourseMemoryModelOutput, ParameterFitOutput
from apps.srs.core.load_balancing import WEEKDAYS
from apps.srs.core.retention_advice import MIN_TIMED_REVIEWS
from apps.srs.core.scheduling import DEFAULT_PARAMETERS, MemoryStage
from apps.srs.models import (
    DeckPass,
    ParametersSource,
    Reschedule,
    RescheduleReason,
    ReviewSource,
    SchedulingSettings,
    StoredRetentionAdvice,
)
from apps.srs.progress.browse import CardState
from apps.srs.progress.card_fields import browsed_memory_fields, card_review_fields
from apps.srs.reviews.serializers import RECALL_COMPUTED_AT_HELP, RECALL_PROBABILITY_HELP, recall_fields
from apps.srs.settings.config import scheduler_config_from_settings
from apps.srs.settings.rules import (
    DAILY_GOAL_RANGE,
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
    # Only weekday names, each a share of a normal day's load.
    "easy_days": {
        "properties": {day: {"type": "number", "minimum": 0, "maximum": 1} for day in WEEKDAYS},
        "additionalProperties": False,
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
        "daily_goal": DAILY_GOAL_RANGE,
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
    daily_goal = JSONIntegerField(
        required=False, help_text=f"Reviews a day the learner aims for, {_range(DAILY_GOAL_RANGE)}; 0 sets no goal."
    )
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
    auto_optimize = JSONBooleanField(
        required=False,
        help_text="Fit FSRS weights to the learner's reviews on the workers, adopting them only when they predict "
        "recall better than the weights in use; false stops automatic fits (POST /srs/optimize/ still asks for one).",
    )
    parameters_pinned = JSONBooleanField(
        required=False, help_text="Keep fsrs_parameters as they are: no fit, automatic or asked for, replaces them."
    )
    load_balancing = JSONBooleanField(
        required=False,
        help_text="Among the days interval fuzz allows, schedule a card on the one with the fewest reviews due "
        "(weighed by easy_days); false leaves fuzz alone. Previews in the study queue follow the same rule.",
    )
    easy_days = serializers.DictField(
        child=JSONNumberField(),
        required=False,
        help_text='Weekdays with a lighter load, e.g. {"saturday": 0.5, "sunday": 0}: each named day\'s share '
        "of a normal day's reviews, 0 to 1; days not named take a full load. Replaces the whole set; {} for none.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # A misspelt setting would otherwise be dropped silently and look as if it were saved.
        initial = self.initial_data if isinstance(self.initial_data, dict) else {}
        unknown = sorted(set(initial) - set(SETTINGS_FIELDS))
        if unknown:
            raise serializers.ValidationError({name: ["No such setting."] for name in unknown})
        return attrs


class RescheduleOutput(serializers.Serializer):
    """A reschedule of the learner's review cards, queued when their desired retention or weights changed."""

    status = serializers.ChoiceField(
        choices=JobStatus.values, help_text="queued, running, done or failed (a later change queues another)."
    )
    reason = serializers.ChoiceField(
        choices=RescheduleReason.values, help_text="What changed: the FSRS weights or the desired retention."
    )
    cards_total = serializers.IntegerField(help_text="Cards in the review stage when the run started; 0 until then.")
    cards_examined = serializers.IntegerField(help_text="Of those, cards looked at so far.")
    cards_moved = serializers.IntegerField(help_text="Cards whose due date changed.")
    progress = serializers.FloatField(
        min_value=0, max_value=1, help_text="Share of the cards examined, from 0 to 1; 1 once the run is done."
    )
    queued_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)

    def to_representation(self, row: Reschedule) -> dict[str, Any]:
        done = row.status == JobStatus.DONE
        return {
            "status": row.status,
            "reason": row.reason,
            "cards_total": row.cards_total,
            "cards_examined": row.cards_examined,
            "cards_moved": row.cards_moved,
            # Reviews during a run can take cards out of the review stage, so the count examined may stop short.
            "progress": 1.0 if done else min(row.cards_examined / row.cards_total, 1.0) if row.cards_total else 0.0,
            "queued_at": time_text(row.created_at),
            "started_at": time_text(row.started_at) if row.started_at else None,
            "finished_at": time_text(row.finished_at) if row.finished_at else None,
        }


class WorkloadOutput(serializers.Serializer):
    """A year of study simulated at one desired retention, as daily means."""

    reviews_per_day = serializers.FloatField(help_text="Reviews a day, on average over the simulated year.")
    minutes_per_day = serializers.FloatField(help_text="Minutes of study a day, on average over the simulated year.")
    seconds_per_remembered_card = serializers.FloatField(
        help_text="Seconds of study in the year per card remembered at its end; the advice makes this the least."
    )


class RetentionAdviceOutput(serializers.Serializer):
    """The desired retention FSRS's simulator finds cheapest, beside the learner's own setting. Advice only."""

    status = serializers.ChoiceField(
        choices=["computing", "ready", "failed"],
        help_text="ready: the figures below are those of the current settings (computed_at says when; they may be "
        "being computed again meanwhile). computing: a worker is simulating them; ask again in a few seconds. "
        "failed: the simulation failed; it is tried again later.",
    )
    advised_retention = serializers.FloatField(
        allow_null=True,
        help_text="The desired retention with the least study time per remembered card, to 0.01; null until ready. "
        "Nothing changes unless the learner sets it.",
    )
    advised = WorkloadOutput(allow_null=True, help_text="The expected workload at advised_retention.")
    current = WorkloadOutput(allow_null=True, help_text="The expected workload at the learner's desired_retention.")
    computed_at = serializers.DateTimeField(allow_null=True, help_text="When the figures were computed.")
    requested_at = serializers.DateTimeField(help_text="When the latest computation was asked for.")
    parameters_source = serializers.ChoiceField(
        choices=ParametersSource.values,
        help_text="default: FSRS-6's default weights were simulated; fitted: the learner's own fsrs_parameters.",
    )
    review_seconds_source = serializers.ChoiceField(
        choices=["default", "learner", "mixed"],
        allow_null=True,
        help_text="Where the seconds each review takes came from: the learner's median deck review times for each "
        f"stage and rating with {MIN_TIMED_REVIEWS} timed reviews or more, FSRS's defaults for the others. Null until "
        "ready.",
    )
    deck_size = serializers.IntegerField(
        help_text="Cards in the simulated deck: those of the decks the learner studies, rounded up to a bucket."
    )

    def to_representation(self, row: StoredRetentionAdvice) -> dict[str, Any]:
        ready = row.computed_at is not None

        def workload(prefix: str) -> dict[str, float] | None:
            if not ready:
                return None
            return {
                name: getattr(row, f"{prefix}_{name}")
                for name in ("reviews_per_day", "minutes_per_day", "seconds_per_remembered_card")
            }

        failed = row.status == JobStatus.FAILED
        return {
            "status": "ready" if ready else "failed" if failed else "computing",
            "advised_retention": row.advised_retention if ready else None,
            "advised": workload("advised"),
            "current": workload("current"),
            "computed_at": time_text(row.computed_at) if row.computed_at else None,
            "requested_at": time_text(row.requested_at),
            "parameters_source": row.parameters_source,
            "review_seconds_source": row.review_seconds_source or None,
            "deck_size": row.deck_size_bucket,
        }


class SchedulingSettingsOutput(serializers.Serializer):
    desired_retention = serializers.FloatField()
    learning_steps = serializers.ListField(child=serializers.IntegerField(), help_text="Seconds.")
    relearning_steps = serializers.ListField(child=serializers.IntegerField(), help_text="Seconds.")
    maximum_interval_days = serializers.IntegerField()
    new_cards_per_day = serializers.IntegerField()
    max_reviews_per_day = serializers.IntegerField()
    daily_goal = serializers.IntegerField(help_text="Reviews a day the learner aims for; 0: no goal.")
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
    auto_optimize = serializers.BooleanField(
        help_text="Weights are fitted to the learner's reviews on the workers, and adopted only when better."
    )
    parameters_pinned = serializers.BooleanField(help_text="No fit replaces fsrs_parameters.")
    load_balancing = serializers.BooleanField(
        help_text="New intervals go to the least loaded of the days fuzz allows (weighed by easy_days)."
    )
    easy_days = serializers.DictField(
        child=serializers.FloatField(),
        help_text="Weekday name to its share of a normal day's reviews, 0 to 1; days not named take a full load.",
    )
    optimized_at = serializers.DateTimeField(allow_null=True, help_text="When the latest fit finished; null before.")
    reviews_at_last_fit = serializers.IntegerField(help_text="Reviews in the learner's log at the latest fit.")
    parameter_fits = ParameterFitOutput(
        many=True,
        help_text=f"The latest {PARAMETER_FITS_SHOWN} fits of weights to the learner's reviews, newest first.",
    )
    updated_at = serializers.DateTimeField(allow_null=True, help_text="Null until the learner changes a setting.")
    latest_reschedule = RescheduleOutput(
        allow_null=True,
        help_text="The latest move of the learner's review cards to the due dates a new desired retention or new "
        "weights give; null when there was none.",
    )
    retention_advice = RetentionAdviceOutput(
        help_text="The desired retention that costs the least study time per remembered card under the weights in "
        "use, and the daily workload at it and at desired_retention, from FSRS's simulator on the workers."
    )
    memory_models = CourseMemoryModelOutput(
        many=True,
        help_text="Each course's memory model in use, learned on the workers from every learner's reviews of its "
        "cards, adopted only where it predicts held-out reviews with a lower log loss; in_use says whether it "
        "schedules your cards of that course.",
    )

    def to_representation(self, settings: SchedulingSettings) -> dict[str, Any]:
        """`context["latest_reschedule"]`: the learner's latest Reschedule, if any.

        `context["parameter_fits"]`: the learner's latest fits, newest first.

        `context["retention_advice"]`: the learner's StoredRetentionAdvice for these settings.

        `context["memory_models"]`: the learner's LearnerCourseModel of each course with a model in use.
        """
        data = {name: getattr(settings, name) for name in SETTINGS_FIELDS}
        data["fsrs_parameters_in_use"] = list(scheduler_config_from_settings(settings).parameters)
        data["updated_at"] = time_text(settings.updated_at) if settings.pk and settings.updated_at else None
        data["optimized_at"] = time_text(settings.optimized_at) if settings.optimized_at else None
        data["reviews_at_last_fit"] = settings.reviews_at_last_fit
        data["parameter_fits"] = ParameterFitOutput(self.context.get("parameter_fits", []), many=True).data
        reschedule = self.context.get("latest_reschedule")
        data["latest_reschedule"] = RescheduleOutput(reschedule).data if reschedule is not None else None
        data["retention_advice"] = RetentionAdviceOutput(self.context["retention_advice"]).data
        data["memory_models"] = CourseMemoryModelOutput(self.context.get("memory_models", []), many=True).data
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
            "started_at": time_text(deck_pass.started_at),
            "finished_at": time_text(deck_pass.finished_at),
            "duration_ms": duration // _MILLISECOND,
            "client_pass_id": str(deck_pass.client_pass_id),
            "recorded_at": time_text(deck_pass.recorded_at),
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
    recall_probability = serializers.FloatField(min_value=0, max_value=1, help_text=RECALL_PROBABILITY_HELP)
    recall_computed_at = serializers.DateTimeField(help_text=RECALL_COMPUTED_AT_HELP)

    def to_representation(self, memory: Any) -> dict[str, Any]:
        """`context["recall_basis"]`: the learner's RecallBasis for the card's recall now."""
        return {
            "card": DeckCardOutput(memory.card).data,
            "deck": memory.card.deck.slug,
            "lapses": memory.lapses,
            "suspended": memory.suspended,
            "stage": MemoryStage(memory.stage).name.lower(),
            "due": time_text(memory.due),
            **recall_fields(self.context["recall_basis"].of_memory(memory, card_id=memory.card_id)),
        }


# --- The card browser ----------------------------------------------------------------------------

CARD_STATES = [state.value for state in CardState]
MEMORY_STAGES = [stage.name.lower() for stage in MemoryStage]
CARD_STAGES = ["new", *MEMORY_STAGES]


def _browsed_card(card: Any, concepts: Any, memory: Any, basis: Any) -> dict[str, Any]:
    """A card as the browser shows it: its content, deck and concepts, and the learner's memory of it."""
    return {
        "card": DeckCardOutput(card).data,
        "deck": card.deck.slug,
        "deck_title": card.deck.title,
        "concepts": [{"slug": concept.slug, "name": concept.name} for concept in concepts],
        **browsed_memory_fields(memory, basis, card_id=card.pk),
    }


class ConceptNameOutput(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()


class BrowsedCardOutput(serializers.Serializer):
    card = DeckCardOutput()
    deck = serializers.CharField(help_text="The deck's slug.")
    deck_title = serializers.CharField()
    concepts = ConceptNameOutput(many=True, help_text="The course's concepts the card teaches, in course order.")
    stage = serializers.ChoiceField(choices=CARD_STAGES, help_text="new: never reviewed by this learner.")
    due = serializers.DateTimeField(allow_null=True, help_text="Null for a new card.")
    is_due = serializers.BooleanField(help_text="Due now and not suspended.")
    reviews = serializers.IntegerField(help_text="Reviews that stand (undone ones not counted).")
    lapses = serializers.IntegerField()
    is_leech = serializers.BooleanField()
    suspended = serializers.BooleanField()
    last_review = serializers.DateTimeField(allow_null=True)
    recall_probability = serializers.FloatField(
        min_value=0, max_value=1, allow_null=True, help_text=RECALL_PROBABILITY_HELP
    )
    recall_computed_at = serializers.DateTimeField(help_text=RECALL_COMPUTED_AT_HELP)

    def to_representation(self, card: Any) -> dict[str, Any]:
        """`card.learner_memories` and `card.course_concepts` as the browser's selector prefetches them;
        `context["recall_basis"]` for the recall now."""
        memory = card.learner_memories[0] if card.learner_memories else None
        return _browsed_card(card, card.course_concepts, memory, self.context["recall_basis"])


class CardReviewOutput(serializers.Serializer):
    id = serializers.IntegerField()
    reviewed_at = serializers.DateTimeField()
    rating = serializers.IntegerField(min_value=1, max_value=4)
    source = serializers.ChoiceField(choices=ReviewSource.values)  # type: ignore[assignment]
    duration_ms = serializers.IntegerField(allow_null=True)
    stage_before = serializers.ChoiceField(
        choices=CARD_STAGES, allow_null=True, help_text="Null when the stored state cannot be read."
    )
    recall_before = serializers.FloatField(
        min_value=0,
        max_value=1,
        allow_null=True,
        help_text="The probability of recall the memory model in use now gives the moment before this review; "
        "null for a first review.",
    )
    interval_days = serializers.FloatField(
        allow_null=True, help_text="From this review to the due time it set, in days; null when it cannot be read."
    )
    stability_days = serializers.FloatField(allow_null=True, help_text="FSRS stability after the review, in days.")
    difficulty = serializers.FloatField(allow_null=True, help_text="FSRS difficulty after the review, 1 to 10.")


class CardHistoryOutput(BrowsedCardOutput):
    history = CardReviewOutput(many=True, help_text="The learner's reviews of the card that stand, oldest first.")

    def to_representation(self, found: Any) -> dict[str, Any]:
        """A CardHistory; `context["recall_basis"]` as for BrowsedCardOutput."""
        basis = self.context["recall_basis"]
        return {
            **_browsed_card(found.card, found.concepts, found.memory, basis),
            "history": [card_review_fields(review, basis, card_id=found.card.pk) for review in found.reviews],
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
    mastery = serializers.FloatField(
        help_text="Mean over the cards of recall now times stability / 21 days (at most 1): recalled and lasting; "
        "new count 0."
    )


class DailyGoalOutput(serializers.Serializer):
    goal = serializers.IntegerField(help_text="Reviews a day the learner aims for; 0: no goal set.")
    reviews_today = serializers.IntegerField(help_text="Reviews that stand, made today (the learner's day).")
    met = serializers.BooleanField(help_text="A goal is set and today's reviews reach it.")
    streak = serializers.IntegerField(
        help_text="Days in a row the goal was met, up to today (or yesterday, while today is not met yet); "
        "0 without a goal. Counted back at most 365 days."
    )
    day_end = serializers.DateTimeField(help_text="When today ends for the learner: the count starts again.")


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
