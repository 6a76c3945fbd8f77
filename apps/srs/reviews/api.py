"""Study and review endpoints."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.common.query import QueryIntegerField, query_params_validate
from apps.common.schema import error_statuses
from apps.common.throttling import ReviewVolumeThrottle, ScopedAddressRateThrottle, ScopedLearnerRateThrottle
from apps.srs.reviews.recall import RecallBasis
from apps.srs.reviews.selectors import DEFAULT_STUDY_LIMIT, MAX_STUDY_LIMIT, deck_study_queue_get
from apps.srs.reviews.serializers import (
    ReviewBatchInput,
    ReviewBatchOutput,
    ReviewInput,
    ReviewOutput,
    StudyOutput,
)
from apps.srs.reviews.services import ReviewInput as ReviewData
from apps.srs.reviews.services import ReviewOutcome, review_submit, review_undo, review_upload_admit, reviews_submit
from apps.srs.reviews.study_output import study_data


def _review_data(data: dict[str, Any]) -> ReviewData:
    return ReviewData(
        card_id=data["card"],
        rating=data["rating"],
        client_review_id=data["client_review_id"],
        reviewed_at=data.get("reviewed_at"),
        duration_ms=data.get("duration_ms"),
    )


def _recall_context(outcomes: Sequence[ReviewOutcome], *, now: datetime) -> dict[str, Any]:
    """What ReviewOutput needs for each card's probability of recall at `now`, the time the request was handled:
    the configs the service recorded the reviews under, so the answer costs no query of its own."""
    found = [outcome.configs for outcome in outcomes if outcome.configs is not None]
    return {"recall_basis": RecallBasis(configs=found[0], now=now)} if found else {}


class StudyView(APIView):
    class Query(serializers.Serializer):
        limit = QueryIntegerField(
            min_value=1,
            max_value=MAX_STUDY_LIMIT,
            default=DEFAULT_STUDY_LIMIT,
            help_text=f"At most this many cards, 1-{MAX_STUDY_LIMIT}.",
        )

    @extend_schema(
        summary="The cards to study now in a deck, with today's counts and each rating's next interval",
        parameters=[Query],
        responses=StudyOutput,
    )
    def get(self, request: Request, slug: str) -> Response:
        limit = query_params_validate(query_params=request.query_params, serializer_class=self.Query)["limit"]
        queue = deck_study_queue_get(learner=request.user, slug=slug, now=timezone.now(), limit=limit)
        return Response(study_data(queue))


class ReviewCreateView(APIView):
    throttle_classes = [ScopedLearnerRateThrottle, ScopedAddressRateThrottle]
    throttle_scope = "reviews"

    @extend_schema(
        summary="Record one review of a card",
        request=ReviewInput,
        responses={201: ReviewOutput, 200: ReviewOutput},
        description=(
            "201 when recorded; 200 with the first result when the same review was already recorded under its "
            "client_review_id; 409 idempotency_key_reused when that id was recorded for a different review; "
            "404 when the card does not exist or the learner cannot study it; 409 sync_in_progress, with "
            "Retry-After, when other reviews of the learner's kept it waiting too long (nothing was recorded)."
        ),
    )
    @error_statuses(404, 409, retry_after=(409,))
    def post(self, request: Request) -> Response:
        body = ReviewInput(data=request.data)
        body.is_valid(raise_exception=True)
        now = timezone.now()
        outcome = review_submit(learner=request.user, review=_review_data(body.validated_data), now=now)
        return Response(
            ReviewOutput(outcome, context=_recall_context([outcome], now=now)).data,
            status=status.HTTP_201_CREATED if outcome.created else status.HTTP_200_OK,
        )


class ReviewBatchView(APIView):
    throttle_classes = [ScopedLearnerRateThrottle, ScopedAddressRateThrottle, ReviewVolumeThrottle]
    throttle_scope = "reviews"

    @extend_schema(
        summary="Record up to 1,000 reviews made offline, all or nothing",
        request=ReviewBatchInput,
        responses={200: ReviewBatchOutput},
        description=(
            "Errors name each bad item by its index, e.g. reviews.3.card; a client_review_id that another item or "
            "an earlier review uses for a different review is such an error. Reviews apply per card in "
            "reviewed_at order; a late one replays its card's history from it on. When the only fault is items "
            "naming cards the learner cannot study, the answer is a 404 naming each such item. 409 "
            "sync_in_progress, with Retry-After, at once while another upload of the learner's reviews is being "
            "recorded, or when one kept this one waiting too long: nothing was recorded; send it again then."
        ),
    )
    @error_statuses(404, 409, retry_after=(409,))
    def post(self, request: Request) -> Response:
        # Before the body is read: an upload that cannot have the learner's turn costs one query.
        learner: Any = request.user
        review_upload_admit(learner_id=learner.pk)
        body = ReviewBatchInput(data=request.data)
        body.is_valid(raise_exception=True)
        now = timezone.now()
        outcomes = reviews_submit(
            learner=request.user,
            reviews=[_review_data(item) for item in body.validated_data["reviews"]],
            now=now,
            field_prefix="reviews.{index}.",
        )
        context = _recall_context(outcomes, now=now)
        return Response({"results": [ReviewOutput(outcome, context=context).data for outcome in outcomes]})


class ReviewUndoView(APIView):
    @extend_schema(
        summary="Undo the latest review of a card",
        request=None,
        responses={200: ReviewOutput},
        description=(
            "409 when the review is not the card's latest or is already undone; 409 sync_in_progress, with "
            "Retry-After, when other reviews of the learner's kept it waiting too long."
        ),
    )
    @error_statuses(409, retry_after=(409,))
    def post(self, request: Request, review_id: int) -> Response:
        now = timezone.now()
        outcome = review_undo(learner=request.user, review_id=review_id, now=now)
        return Response(ReviewOutput(outcome, context=_recall_context([outcome], now=now)).data)
