"""Match the Pairs endpoints: start a board, try pairs, resume, and compare scores."""

from __future__ import annotations

import uuid

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.common.pagination import PageNumberPagination, PageQuery
from apps.common.query import QueryIntegerField, query_params_validate
from apps.common.schema import error_statuses
from apps.content.selectors import deck_get
from apps.games.models import DEFAULT_PAIRS, MAX_PAIRS, MIN_PAIRS
from apps.games.selectors import (
    board_get,
    board_status,
    match_best_list,
    match_history_list,
    match_leaderboard_get,
)
from apps.games.serializers import (
    LeaderboardEntryOutput,
    LeaderboardOutput,
    MatchAttemptInput,
    MatchAttemptOutput,
    MatchBestOutput,
    MatchBoardOutput,
    MatchBoardStartOutput,
    MatchHistoryItemOutput,
    MatchHistoryOutput,
    MatchStartInput,
)
from apps.games.services import attempt_make, board_start


class MatchBoardStartView(APIView):
    @extend_schema(
        summary="Start a Match the Pairs board from a deck",
        request=MatchStartInput,
        responses={201: MatchBoardStartOutput},
        description=(
            "The cards favour the learner's due and weakest cards, then new ones. Terms and definitions "
            "come as two independently shuffled lists with random per-board ids: nothing reveals a pair "
            "until it is matched. 400 when the deck has fewer than 2 cards or fewer cards than pairs; "
            "404 for an unknown or archived deck."
        ),
    )
    def post(self, request: Request, slug: str) -> Response:
        body = MatchStartInput(data=request.data)
        body.is_valid(raise_exception=True)
        board = board_start(
            learner=request.user, deck_slug=slug, pairs=body.validated_data["pairs"], now=timezone.now()
        )
        return Response(MatchBoardStartOutput(board).data, status=status.HTTP_201_CREATED)


class MatchAttemptView(APIView):
    @extend_schema(
        summary="Try to pair a term with a definition",
        request=MatchAttemptInput,
        responses={201: MatchAttemptOutput, 200: MatchAttemptOutput},
        description=(
            "Every accepted attempt is recorded. A correct one reveals the pair and records the card's "
            "review (Good at the first try, Again after a mistake on it); a wrong one adds the time "
            "penalty. The last match finishes the board and saves its score. 201 when recorded; 200 with "
            "the first outcome (duplicate: true) when the client_attempt_id was already recorded for this "
            "board and these ids, even after the board finished. Refused attempts change nothing: 400 for "
            "unknown ids or a malformed body, 404 for an unknown board (or another learner's), 409 when "
            "the board is finished or expired or an item is already matched, and 409 "
            "idempotency_key_reused when the client_attempt_id was recorded with another board or ids."
        ),
    )
    @error_statuses(409, retry_after=(409,))
    def post(self, request: Request, board_id: uuid.UUID) -> Response:
        body = MatchAttemptInput(data=request.data)
        body.is_valid(raise_exception=True)
        outcome = attempt_make(learner=request.user, board_id=board_id, now=timezone.now(), **body.validated_data)
        return Response(
            MatchAttemptOutput(outcome).data,
            status=status.HTTP_201_CREATED if outcome.created else status.HTTP_200_OK,
        )


class MatchBoardView(APIView):
    @extend_schema(
        summary="A board's state, to resume it or see its score",
        responses=MatchBoardOutput,
        description="Only matched pairs name their card. 404 for an unknown board or another learner's.",
    )
    def get(self, request: Request, board_id: uuid.UUID) -> Response:
        board = board_get(learner=request.user, board_id=board_id)
        now = timezone.now()
        return Response(MatchBoardOutput(board, context={"status": board_status(board, now=now), "now": now}).data)


class MatchHistoryView(APIView):
    @extend_schema(
        summary="The learner's finished boards on a deck, newest first, with the best per board size",
        parameters=[PageQuery],
        responses=MatchHistoryOutput,
    )
    def get(self, request: Request, slug: str) -> Response:
        deck = deck_get(slug=slug)
        paginator = PageNumberPagination()
        page = paginator.paginate_queryset(match_history_list(learner=request.user, deck=deck), request, view=self)
        response = paginator.get_paginated_response(MatchHistoryItemOutput(page, many=True).data)
        response.data["best"] = MatchBestOutput(match_best_list(learner=request.user, deck=deck), many=True).data
        return response


class MatchLeaderboardView(APIView):
    class Query(serializers.Serializer):
        pairs = QueryIntegerField(
            min_value=MIN_PAIRS,
            max_value=MAX_PAIRS,
            default=DEFAULT_PAIRS,
            help_text=f"Board size, {MIN_PAIRS}-{MAX_PAIRS}; {DEFAULT_PAIRS} if absent.",
        )

    @extend_schema(
        summary="The top 10 learners of a deck at one board size, by their best score",
        parameters=[Query],
        responses=LeaderboardOutput,
        description=(
            "Only learners who opted in (PATCH /me/) appear, under their display name. `me` is the "
            "caller's own place when they opted in and have a score at this size."
        ),
    )
    def get(self, request: Request, slug: str) -> Response:
        pairs = query_params_validate(query_params=request.query_params, serializer_class=self.Query)["pairs"]
        deck = deck_get(slug=slug)
        board = match_leaderboard_get(deck=deck, pairs=pairs, learner=request.user)
        return Response(
            {
                "pairs": board.pairs,
                "results": LeaderboardEntryOutput(board.entries, many=True).data,
                "opted_in": board.opted_in,
                "me": LeaderboardEntryOutput(board.me).data if board.me is not None else None,
            }
        )
