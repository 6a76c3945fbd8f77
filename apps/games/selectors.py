"""Reads of Match the Pairs: a board to resume, a learner's history and bests, and leaderboards."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, F, Q, QuerySet, Window
from django.db.models.functions import RowNumber

from apps.common.errors import NotFound
from apps.content.models import Deck
from apps.games.models import MatchBoard

LEADERBOARD_SIZE = 10


class BoardNotFound(NotFound):
    """The same answer for a board that does not exist and for another learner's board."""

    def __init__(self) -> None:
        super().__init__("No such board.")


def board_status(board: MatchBoard, *, now: datetime) -> str:
    """The board as the client sees it: finished, expired (unfinished past its expiry) or playing."""
    if board.finished_at is not None:
        return "finished"
    if now >= board.expires_at:
        return "expired"
    return "playing"


def board_get(*, learner: Any, board_id: uuid.UUID) -> MatchBoard:
    """The learner's board with its cards; another learner's board is as absent as a missing one."""
    board = MatchBoard.objects.filter(pk=board_id, learner=learner).prefetch_related("items__card").first()
    if board is None:
        raise BoardNotFound()
    return board


def match_history_list(*, learner: Any, deck: Deck) -> QuerySet[MatchBoard]:
    """The learner's finished boards on the deck, newest first. Expired and running boards have no score."""
    return MatchBoard.objects.filter(learner=learner, deck=deck, finished_at__isnull=False).order_by(
        "-finished_at", "-pk"
    )


def match_best_list(*, learner: Any, deck: Deck) -> list[MatchBoard]:
    """The learner's best board of each size on the deck: lowest score, then the earliest; in one query.

    Each board carries `boards_count`, the learner's number of finished boards of that size.
    """
    ranked = (
        MatchBoard.objects.filter(learner=learner, deck=deck, finished_at__isnull=False)
        .annotate(
            rank=Window(
                RowNumber(),
                partition_by=[F("pairs")],
                order_by=[F("score_ms").asc(), F("finished_at").asc(), F("pk").asc()],
            ),
            boards_count=Window(Count("pk"), partition_by=[F("pairs")]),
        )
        .filter(rank=1)
        .order_by("pairs")
    )
    return list(ranked)


@dataclass(frozen=True)
class LeaderboardEntry:
    rank: int
    display_name: str
    score_ms: int
    finished_at: datetime


@dataclass(frozen=True)
class Leaderboard:
    pairs: int
    entries: list[LeaderboardEntry]
    opted_in: bool
    # The caller's own place, when they are listed (opted in, with a finished board of this size).
    me: LeaderboardEntry | None


def _listed_boards(*, deck: Deck, pairs: int) -> QuerySet[MatchBoard]:
    return MatchBoard.objects.filter(
        deck=deck,
        pairs=pairs,
        finished_at__isnull=False,
        learner__learner_profile__show_on_leaderboards=True,
    ).exclude(learner__learner_profile__display_name="")


def match_leaderboard_get(*, deck: Deck, pairs: int, learner: Any) -> Leaderboard:
    """The top learners by their best score at this board size, opted-in learners only, by display name.

    Ranked by best score, then by who reached it first; each learner appears once. Usernames and
    emails never leave this function: only the display name the learner chose to show.
    """
    bests = (
        _listed_boards(deck=deck, pairs=pairs)
        .annotate(
            learner_rank=Window(
                RowNumber(),
                partition_by=[F("learner_id")],
                order_by=[F("score_ms").asc(), F("finished_at").asc(), F("pk").asc()],
            )
        )
        .filter(learner_rank=1)
        .select_related("learner__learner_profile")
        .order_by("score_ms", "finished_at", "learner_id")
    )
    entries = [
        LeaderboardEntry(
            rank=index + 1,
            display_name=board.learner.learner_profile.display_name,
            score_ms=board.score_ms or 0,
            finished_at=board.finished_at or board.started_at,
        )
        for index, board in enumerate(bests[:LEADERBOARD_SIZE])
    ]
    # The learner's profile row exists once they change it; until then they are not on any leaderboard.
    profile = getattr(learner, "learner_profile", None)
    display_name = profile.display_name if profile is not None and profile.show_on_leaderboards else ""
    opted_in = bool(display_name)
    me: LeaderboardEntry | None = None
    own = (
        _listed_boards(deck=deck, pairs=pairs).filter(learner=learner).order_by("score_ms", "finished_at", "pk").first()
        if opted_in
        else None
    )
    if own is not None and own.score_ms is not None and own.finished_at is not None:
        # Learners ahead: any listed board better than the caller's best, by the same order as above.
        ahead = (
            _listed_boards(deck=deck, pairs=pairs)
            .exclude(learner=learner)
            .filter(
                Q(score_ms__lt=own.score_ms)
                | Q(score_ms=own.score_ms, finished_at__lt=own.finished_at)
                | Q(score_ms=own.score_ms, finished_at=own.finished_at, learner_id__lt=own.learner_id)
            )
            .values("learner_id")
            .distinct()
            .count()
        )
        me = LeaderboardEntry(
            rank=ahead + 1, display_name=display_name, score_ms=own.score_ms, finished_at=own.finished_at
        )
    return Leaderboard(pairs=pairs, entries=entries, opted_in=opted_in, me=me)
