"""Study and review endpoints."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.common.errors import DomainError
from apps.common.throttling import ScopedAddressRateThrottle, ScopedLearnerRateThrottle
from apps.content.selectors import deck_get
from apps.srs.selectors import DEFAULT_STUDY_LIMIT, MAX_STUDY_LIMIT, study_queue_get
from apps.srs.serializers import (
    ReviewBatchInput,
    ReviewBatchOutput,
    ReviewInput,
    ReviewOutput,
    StudyOutput,
)
from apps.srs.services import ReviewInput as ReviewData
from apps.srs.services import review_undo, reviews_submit


def _review_data(data: dict[str, Any], *, now: Any) -> ReviewData:
    return ReviewData(
        card_id=data["card"],
        rating=data["rating"],
        client_review_id=data["client_review_id"],
        reviewed_at=data.get("reviewed_at") or now,
        duration_ms=data.get("duration_ms"),
    )


class StudyView(APIView):
    @extend_schema(
        summary="The cards to study now in a deck, with today's counts and each rating's next interval",
        parameters=[OpenApiParameter("limit", int, description=f"At most this many cards (1-{MAX_STUDY_LIMIT}).")],
        responses=StudyOutput,
    )
    def get(self, request: Request, slug: str) -> Response:
        raw_limit = request.query_params.get("limit", str(DEFAULT_STUDY_LIMIT))
        # isdigit() alone lets through digits int() refuses, such as "²".
        if not (raw_limit.isascii() and raw_limit.isdigit()) or not 1 <= int(raw_limit) <= MAX_STUDY_LIMIT:
            raise DomainError(
                f"limit must be a whole number from 1 to {MAX_STUDY_LIMIT}.",
                fields={"limit": [f"Expected 1-{MAX_STUDY_LIMIT}, got {raw_limit!r}."]},
            )
        deck = deck_get(slug=slug)
        queue = study_queue_get(learner=request.user, deck=deck, now=timezone.now(), limit=int(raw_limit))
        return Response(
            StudyOutput(
                {
                    "deck": deck.slug,
                    "day_start": queue.day_start,
                    "day_end": queue.day_end,
                    "counts": {
                        "learning_due": queue.learning_due,
                        "reviews_due": queue.reviews_due,
                        "new_due": queue.new_due,
                        "new_left_today": queue.new_left_today,
                        "reviews_left_today": queue.reviews_left_today,
                    },
                    "cards": queue.items,
                }
            ).data
        )


class ReviewCreateView(APIView):
    throttle_classes = [ScopedLearnerRateThrottle, ScopedAddressRateThrottle]
    throttle_scope = "reviews"

    @extend_schema(
        summary="Record one review of a card",
        request=ReviewInput,
        responses={201: ReviewOutput, 200: ReviewOutput},
        description="201 when recorded; 200 with the first result when the client_review_id was already recorded.",
    )
    def post(self, request: Request) -> Response:
        body = ReviewInput(data=request.data)
        body.is_valid(raise_exception=True)
        now = timezone.now()
        (outcome,) = reviews_submit(
            learner=request.user, reviews=[_review_data(body.validated_data, now=now)], now=now, field_prefix=""
        )
        return Response(
            ReviewOutput(outcome).data, status=status.HTTP_201_CREATED if outcome.created else status.HTTP_200_OK
        )


class ReviewBatchView(APIView):
    throttle_classes = [ScopedLearnerRateThrottle, ScopedAddressRateThrottle]
    throttle_scope = "reviews"

    @extend_schema(
        summary="Record up to 1,000 reviews made offline, all or nothing",
        request=ReviewBatchInput,
        responses={200: ReviewBatchOutput},
        description=(
            "Errors name each bad item by its index, e.g. reviews.3.card. Reviews apply per card in "
            "reviewed_at order; late ones trigger a replay of that card's history."
        ),
    )
    def post(self, request: Request) -> Response:
        body = ReviewBatchInput(data=request.data)
        body.is_valid(raise_exception=True)
        now = timezone.now()
        outcomes = reviews_submit(
            learner=request.user,
            reviews=[_review_data(item, now=now) for item in body.validated_data["reviews"]],
            now=now,
            field_prefix="reviews.{index}.",
        )
        return Response({"results": [ReviewOutput(outcome).data for outcome in outcomes]})


class ReviewUndoView(APIView):
    @extend_schema(
        summary="Undo the latest review of a card",
        request=None,
        responses={200: ReviewOutput},
        description="409 when the review is not the card's latest or is already undone.",
    )
    def post(self, request: Request, review_id: int) -> Response:
        outcome = review_undo(learner=request.user, review_id=review_id, now=timezone.now())
        return Response(ReviewOutput(outcome).data)
