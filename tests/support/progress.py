"""Helpers for the settings, passes, leeches and statistics tests: a second deck, leeches, query counts."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.content.models import Card, Deck
from tests.support.reviews import DECK

_NOT_COUNTED = ("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT")


def second_deck(cards: int = 3) -> Deck:
    """A deck in the same lesson as the shipped one, with `cards` cards."""
    first = Deck.objects.get(slug=DECK)
    deck = Deck.objects.create(lesson=first.lesson, slug="second-deck", title="A second deck", position=99)
    for position in range(cards):
        Card.objects.create(
            deck=deck, slug=f"card-{position}", term=f"Term {position}", definition="-", position=position
        )
    return deck


def counted_get(client: APIClient, url: str) -> tuple[Any, list[str]]:
    """GET `url`; the response and its SQL, less savepoints and the token lookup of authentication."""
    with CaptureQueriesContext(connection) as context:
        response = client.get(url)
    statements = [
        query["sql"]
        for query in context.captured_queries
        if not query["sql"].startswith(_NOT_COUNTED) and "accounts_devicetoken" not in query["sql"]
    ]
    return response, statements


def leech_reviews(card: Card, *, lapses: int, start: datetime) -> list[dict[str, Any]]:
    """Review bodies that take a new card to the review stage, then lapse it once a day `lapses` times.

    Each lapse is an Again on a card in the review stage; a Good a quarter of an hour later brings it
    back to the review stage, except after the last lapse, which leaves it relearning.
    """
    bodies = [_body(card, 4, start)]
    for day in range(1, lapses + 1):
        moment = start + timedelta(days=day)
        bodies.append(_body(card, 1, moment))
        if day < lapses:
            bodies.append(_body(card, 3, moment + timedelta(minutes=15)))
    return bodies


def _body(card: Card, rating: int, at: datetime) -> dict[str, Any]:
    return {"card": card.pk, "rating": rating, "client_review_id": str(uuid.uuid4()), "reviewed_at": at.isoformat()}


def days_ago(days: int) -> datetime:
    return datetime.now(UTC).replace(microsecond=0) - timedelta(days=days)
