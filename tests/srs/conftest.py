"""Fixtures for spaced-repetition tests: the shipped deck's cards."""

from __future__ import annotations

import pytest

from apps.content.models import Card
from tests.support.reviews import DECK


@pytest.fixture
def deck_cards(shipped_course) -> list[Card]:
    return list(Card.objects.filter(deck__slug=DECK, archived=False).order_by("position"))
