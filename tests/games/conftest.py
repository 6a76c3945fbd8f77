"""Fixtures for Match the Pairs: a small deck built directly and a clock the server reads."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.utils import timezone

from apps.content.models import Card, Course, Deck, Lesson
from tests.support.games import CARDS, DECK, START, Clock


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


@pytest.fixture
def clock(monkeypatch) -> Iterator[Clock]:
    fake = Clock(START)
    monkeypatch.setattr(timezone, "now", fake)
    yield fake
