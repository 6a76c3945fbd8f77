"""Playing Match the Pairs as the tests do: the server's clock, the board's answers, and moves."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from rest_framework.test import APIClient

from apps.games.models import MatchAttempt, MatchBoard, MatchItem
from apps.srs.models import ReviewLog

DECK = "match-deck"
CARDS = 14
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


class Clock:
    """The server's clock in a test: every timezone.now() reads it, and the test moves it."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


@dataclass(frozen=True)
class Pair:
    term_id: str
    definition_id: str
    card_id: int


def answers(board_id: Any) -> list[Pair]:
    """The board's pairs as the server knows them (a test may look; a client never can)."""
    return [
        Pair(item.term_id, item.definition_id, item.card_id)
        for item in MatchItem.objects.filter(board_id=board_id).order_by("term_position")
    ]


def start(client: APIClient, slug: str = DECK, **body: Any) -> Any:
    return client.post(f"/api/v1/decks/{slug}/match/", body, format="json")


def attempt(client: APIClient, board_id: str, term_id: str, definition_id: str, **extra: Any) -> Any:
    return client.post(
        f"/api/v1/match/{board_id}/attempts/",
        {"term_id": term_id, "definition_id": definition_id, **extra},
        format="json",
    )


def new_board(client: APIClient, pairs: int = 6) -> dict[str, Any]:
    response = start(client, pairs=pairs)
    assert response.status_code == 201, response.json()
    return response.json()


def play_out(client: APIClient, board_id: str, clock: Clock | None = None, seconds_each: float = 1.0) -> Any:
    """Match every remaining pair correctly, moving the clock between matches; the last response."""
    response = None
    for pair in answers(board_id):
        if clock is not None:
            clock.advance(seconds=seconds_each)
        response = attempt(client, board_id, pair.term_id, pair.definition_id)
        if response.status_code == 409 and response.json()["error"]["code"] == "already_matched":
            continue
        assert response.status_code == 201, response.json()
    return response


def wrong_pair(board_id: str) -> tuple[Pair, Pair]:
    first, second = answers(board_id)[:2]
    return first, second


def snapshot(board_id: Any) -> tuple:
    """Everything an attempt can change: the board, its items, its attempts and the reviews."""
    board = MatchBoard.objects.get(pk=board_id)
    return (
        (board.matched, board.wrong_attempts, board.penalty_ms, board.finished_at, board.score_ms),
        list(MatchItem.objects.filter(board_id=board_id).order_by("pk").values_list("missed", "matched_at")),
        MatchAttempt.objects.filter(board_id=board_id).count(),
        ReviewLog.objects.count(),
    )
