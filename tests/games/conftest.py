"""Fixtures for Match the Pairs: a small deck built directly, a clock the server reads, and play helpers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from apps.content.models import Card, Course, Deck, Lesson
from apps.games.models import MatchItem

DECK = "match-deck"
CARDS = 14
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def deck(db) -> Deck:
    course = Course.objects.create(slug="match-course", title="Match course")
    lesson = Lesson.objects.create(course=course, slug="match-lesson", title="Match lesson", position=1)
    return Deck.objects.create(lesson=lesson, slug=DECK, title="Match deck", position=1)


@pytest.fixture
def cards(deck) -> list[Card]:
    return [
        Card.objects.create(
            deck=deck,
            slug=f"card-slug-{index}",
            term=f"Term number {index}",
            definition=f"What term {index} means, in a sentence of its own.",
            position=index,
        )
        for index in range(1, CARDS + 1)
    ]


class Clock:
    """The server's clock in a test: every timezone.now() reads it, and the test moves it."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


@pytest.fixture
def clock(monkeypatch) -> Iterator[Clock]:
    fake = Clock(START)
    monkeypatch.setattr(timezone, "now", fake)
    yield fake


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
