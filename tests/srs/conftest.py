"""Fixtures for spaced-repetition tests: the shipped deck's cards and a helper to post reviews."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.content.models import Card

DECK = "tf-data-pipelines"


@pytest.fixture
def deck_cards(shipped_course) -> list[Card]:
    return list(Card.objects.filter(deck__slug=DECK, archived=False).order_by("position"))


def review_body(card: Card, rating: int = 3, at: datetime | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"card": card.pk, "rating": rating, "client_review_id": str(uuid.uuid4()), **extra}
    if at is not None:
        body["reviewed_at"] = at.isoformat()
    return body


def post_review(client: APIClient, body: dict[str, Any]) -> Any:
    return client.post("/api/v1/reviews/", body, format="json")
