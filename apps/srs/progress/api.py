"""Endpoints for a learner's scheduling settings, deck passes, leeches, statistics and the card browser."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.common.fields import CleanSlugField, SingleLineCharField
from apps.common.pagination import PageQuery
from apps.common.query import query_params_validate
from apps.common.schema import error_statuses
from apps.common.validation import body_checked
from apps.srs.adaptation.optimization import parameter_fits_list
from apps.srs.adaptation.rescheduling import reschedule_latest_get
from apps.srs.adaptation.retention_advising import retention_advice_ensure
from apps.srs.models import SchedulingSettings
from apps.srs.progress.browse import CardOrder, CardSearch, CardState, card_history_get, course_cards_browse
from apps.srs.progress.leeches import leech_unsuspend, leeches_list
from apps.srs.progress.passes import PassInput, deck_pass_best_list, deck_pass_record, deck_passes_list
from apps.srs.progress.serializers import (
    BrowsedCardOutput,
    CardHistoryOutput,
    DailyGoalOutput,
    DeckPassBestListOutput,
    DeckPassBestOutput,
    DeckPassInput,
    DeckPassOutput,
    LeechOutput,
    SchedulingSettingsInput,
    SchedulingSettingsOutput,
    StatsOutput,
)
from apps.srs.progress.stats import daily_goal_get, learner_stats_get
from apps.srs.reviews.recall import RecallBasis
from apps.srs.settings.config import scheduling_settings_get
from apps.srs.settings.memory_models import card_configs_get, learner_course_models_list
from apps.srs.settings.services import scheduling_settings_update


def _recall_context(request: Request) -> dict[str, Any]:
    """What LeechOutput needs for each card's probability of recall now."""
    return {"recall_basis": RecallBasis(configs=card_configs_get(learner=request.user), now=timezone.now())}


class _DeckFilterQuery(serializers.Serializer):
    deck = CleanSlugField(required=False)


def _deck_filter(request: Request) -> str | None:
    """The slug given as ?deck=, if any. Like every filter of this API, one that names nothing matches nothing."""
    slug: str | None = query_params_validate(query_params=request.query_params, serializer_class=_DeckFilterQuery).get(
        "deck"
    )
    return slug


class SchedulingSettingsView(APIView):
    @extend_schema(
        summary="The learner's scheduling settings, defaults included",
        responses=SchedulingSettingsOutput,
        description=(
            "retention_advice is computed on the workers: the first request after the weights, desired_retention, "
            "daily limits or deck size change queues it and answers status computing; ask again a few seconds later. "
            "It is advice only: nothing changes until the learner sets desired_retention."
        ),
    )
    def get(self, request: Request) -> Response:
        settings = scheduling_settings_get(learner=request.user)
        return Response(SchedulingSettingsOutput(settings, context=_settings_context(request, settings)).data)

    @extend_schema(
        summary="Change some scheduling settings",
        request=SchedulingSettingsInput,
        responses=SchedulingSettingsOutput,
        description=(
            "Send only the settings to change. All are checked together; one bad value changes nothing. "
            "New values apply from the next review: past reviews keep the settings they were made with. A new "
            "desired_retention or fsrs_parameters also moves the learner's review cards to the due dates it gives, "
            "in the background: latest_reschedule follows it."
        ),
    )
    def patch(self, request: Request) -> Response:
        changes, refused = body_checked(SchedulingSettingsInput(data=request.data, partial=True))
        settings = scheduling_settings_update(learner=request.user, changes=changes, refused=refused)
        return Response(SchedulingSettingsOutput(settings, context=_settings_context(request, settings)).data)


def _settings_context(request: Request, settings: SchedulingSettings) -> dict[str, Any]:
    """What SchedulingSettingsOutput needs besides the settings: the learner's latest reschedule, fits, advice and
    course memory models.

    The advice is looked up through its service: when none exists for these settings it is queued for a worker.
    """
    return {
        "latest_reschedule": reschedule_latest_get(learner=request.user),
        "parameter_fits": parameter_fits_list(learner=request.user),
        "retention_advice": retention_advice_ensure(learner=request.user, settings=settings),
        "memory_models": learner_course_models_list(learner=request.user, settings=settings),
    }


class DeckPassCreateView(APIView):
    @extend_schema(
        summary="Save a finished pass through a deck",
        request=DeckPassInput,
        responses={201: DeckPassOutput, 200: DeckPassOutput},
        description=(
            "201 when saved; 200 with the first result when the same pass was already saved under its "
            "client_pass_id; 409 idempotency_key_reused when that id was saved for a different pass."
        ),
    )
    @error_statuses(409)
    def post(self, request: Request, slug: str) -> Response:
        body = DeckPassInput(data=request.data)
        body.is_valid(raise_exception=True)
        deck_pass, created = deck_pass_record(
            learner=request.user, deck_slug=slug, data=PassInput(**body.validated_data), now=timezone.now()
        )
        return Response(
            DeckPassOutput(deck_pass).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )


@extend_schema(parameters=[_DeckFilterQuery], summary="The learner's deck passes, newest first")
class DeckPassListView(generics.ListAPIView):
    serializer_class = DeckPassOutput

    def get_queryset(self) -> QuerySet[Any]:
        return deck_passes_list(learner=self.request.user, deck_slug=_deck_filter(self.request))


class DeckPassBestView(APIView):
    @extend_schema(summary="The learner's best pass of each deck", responses=DeckPassBestListOutput)
    def get(self, request: Request) -> Response:
        best = deck_pass_best_list(learner=request.user)
        return Response({"results": DeckPassBestOutput(best, many=True).data})


@extend_schema(parameters=[_DeckFilterQuery], summary="The learner's leeches, most lapses first")
class LeechListView(generics.ListAPIView):
    serializer_class = LeechOutput

    def get_queryset(self) -> QuerySet[Any]:
        return leeches_list(learner=self.request.user, deck_slug=_deck_filter(self.request))

    def get_serializer_context(self) -> dict[str, Any]:
        return super().get_serializer_context() | _recall_context(self.request)


class LeechUnsuspendView(APIView):
    @extend_schema(
        summary="Put a suspended card back in the study queue",
        request=None,
        responses=LeechOutput,
        description="404 when the learner has not studied the card. A card not suspended is left as it is.",
    )
    def post(self, request: Request, card_id: int) -> Response:
        memory = leech_unsuspend(learner=request.user, card_id=card_id)
        return Response(LeechOutput(memory, context=_recall_context(request)).data)


class StatsView(APIView):
    @extend_schema(
        summary="Due forecast, reviews per day, true retention, streaks and per-deck mastery",
        parameters=[_DeckFilterQuery],
        responses=StatsOutput,
        description="Days are the learner's: their time zone, starting at their day-start hour.",
    )
    def get(self, request: Request) -> Response:
        stats = learner_stats_get(learner=request.user, now=timezone.now(), deck_slug=_deck_filter(request))
        return Response(StatsOutput(stats).data)


class DailyGoalView(APIView):
    @extend_schema(
        summary="Today's reviews against the learner's daily goal, and the days in a row it was met",
        responses=DailyGoalOutput,
        description="The goal is the daily_goal setting (PATCH /srs/settings/); every review that stands counts: "
        "decks, Match the Pairs and quizzes. Days are the learner's own.",
    )
    def get(self, request: Request) -> Response:
        return Response(DailyGoalOutput(daily_goal_get(learner=request.user, now=timezone.now())).data)


class _CardSearchQuery(PageQuery):
    q = SingleLineCharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="Words that must each appear in the card (any field, or a tag); blank searches nothing.",
    )
    state = serializers.ChoiceField(choices=[state.value for state in CardState], required=False)
    concept = CleanSlugField(required=False, help_text="A concept of the course, by slug.")
    deck = CleanSlugField(required=False, help_text="A deck of the course, by slug.")
    order = serializers.ChoiceField(
        choices=[order.value for order in CardOrder],
        required=False,
        help_text="course (default): the lesson's order; due: soonest first; lapses: most first; recent: last "
        "reviewed first. New cards come last in all but course.",
    )


class CourseCardBrowseView(generics.ListAPIView):
    serializer_class = BrowsedCardOutput

    @extend_schema(
        summary="Browse a course's cards with the learner's memory of each: search, filter, page",
        parameters=[_CardSearchQuery],
        description="Every card of the course the learner can study, new ones included. A deck or concept "
        "that is not the course's matches nothing; an unknown course is a 404.",
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[Any]:
        params = query_params_validate(query_params=self.request.query_params, serializer_class=_CardSearchQuery)
        search = CardSearch(
            text=params.get("q", "").strip(),
            state=CardState(params["state"]) if "state" in params else None,
            concept=params.get("concept"),
            deck=params.get("deck"),
            order=CardOrder(params.get("order", CardOrder.COURSE)),
        )
        return course_cards_browse(
            learner=self.request.user, course_slug=self.kwargs["slug"], search=search, now=self.recall_basis.now
        )

    @cached_property
    def recall_basis(self) -> RecallBasis:
        """One moment and one read of the learner's card configs for the filter and every row."""
        basis: RecallBasis = _recall_context(self.request)["recall_basis"]
        return basis

    def get_serializer_context(self) -> dict[str, Any]:
        return super().get_serializer_context() | {"recall_basis": self.recall_basis}


class CardHistoryView(APIView):
    @extend_schema(
        summary="One card with the learner's memory of it and their reviews of it",
        responses=CardHistoryOutput,
        description="404 for a card the learner cannot study. A card never reviewed has an empty history.",
    )
    def get(self, request: Request, card_id: int) -> Response:
        found = card_history_get(learner=request.user, card_id=card_id)
        return Response(CardHistoryOutput(found, context=_recall_context(request)).data)
