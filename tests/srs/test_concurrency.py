"""Reviews racing on one card from real concurrent connections: no lost update, no duplicate, no deadlock."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from apps.content.models import Card
from apps.srs.core.scheduling import MemoryState, Rating, ReviewEvent, replay
from apps.srs.models import CardMemory, ReviewKind, ReviewLog
from apps.srs.reviews.memory import memory_state_of
from apps.srs.reviews.services import ReviewInput, reviews_submit
from apps.srs.settings.config import scheduler_config_from_json
from tests.support.api import client_with_token, learner_with_token
from tests.support.reviews import load_balancing_off, post_review, review_body, run_together

pytestmark = [
    pytest.mark.django_db(transaction=True),
]

THREADS = 8


def replayed_state(learner: Any, card: Card) -> MemoryState:
    """The card's state rebuilt sequentially from its log, in time order, each review with its own settings."""
    logs = ReviewLog.objects.filter(
        learner=learner, card=card, kind=ReviewKind.REVIEW, undone_by__isnull=True
    ).select_related("profile")
    events = []
    for log in logs:
        assert log.rating is not None and log.profile is not None
        events.append(
            ReviewEvent(
                reviewed_at=log.reviewed_at,
                review_id=str(log.client_review_id),
                rating=Rating(log.rating),
                config=scheduler_config_from_json(log.profile.config),
            )
        )
    return replay(events, learner_id=learner.pk, card_id=card.pk)[-1]


@pytest.fixture
def racer(shipped_course) -> tuple[Any, str]:
    learner, token = learner_with_token("racer")
    # Checked against a plain replay of the log, which does not balance due dates.
    load_balancing_off(learner)
    return learner, token


@pytest.mark.parametrize("card_is_new", [True, False], ids=["new card", "reviewed card"])
def test_simultaneous_reviews_of_one_card_all_count(racer, card_is_new):
    learner, token = racer
    card = Card.objects.filter(deck__slug="tf-data-pipelines", archived=False).order_by("position").first()
    assert card is not None
    base = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    earlier = 0
    if not card_is_new:
        assert post_review(client_with_token(token), review_body(card, 4, base - timedelta(days=30))).status_code == 201
        earlier = 1
    # Reviews a second apart, racing in whatever order the threads run: some arrive late and replay.
    bodies = [review_body(card, 1 + index % 4, base + timedelta(seconds=index)) for index in range(THREADS)]

    responses = run_together(THREADS, lambda index: post_review(client_with_token(token), bodies[index]))

    assert [response.status_code for response in responses] == [201] * THREADS, [r.json() for r in responses]
    logged = list(ReviewLog.objects.filter(learner=learner, card=card).values_list("client_review_id", flat=True))
    assert len(logged) == THREADS + earlier
    for body in bodies:
        assert logged.count(uuid.UUID(body["client_review_id"])) == 1
    memory = CardMemory.objects.get(learner=learner, card=card)
    assert memory.reps == THREADS + earlier
    assert memory_state_of(memory) == replayed_state(learner, card)
    assert memory.last_review == base + timedelta(seconds=THREADS - 1)


@pytest.mark.parametrize("card_is_new", [True, False], ids=["new card", "reviewed card"])
def test_the_same_review_sent_at_once_from_many_connections_is_recorded_once(racer, card_is_new):
    learner, token = racer
    card = Card.objects.filter(deck__slug="tf-data-pipelines", archived=False).order_by("position").first()
    assert card is not None
    if not card_is_new:
        assert (
            post_review(
                client_with_token(token), review_body(card, 4, datetime.now(UTC) - timedelta(days=9))
            ).status_code
            == 201
        )
    before = CardMemory.objects.filter(learner=learner, card=card).values_list("reps", flat=True).first() or 0
    body = review_body(card, 3, datetime.now(UTC) - timedelta(minutes=1))

    responses = run_together(THREADS, lambda _: post_review(client_with_token(token), body))

    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] * (THREADS - 1) + [201]
    assert len({response.json()["id"] for response in responses}) == 1
    assert [response.json()["duplicate"] for response in responses].count(False) == 1
    assert ReviewLog.objects.filter(learner=learner, client_review_id=body["client_review_id"]).count() == 1
    memory = CardMemory.objects.get(learner=learner, card=card)
    assert memory.reps == before + 1
    assert memory_state_of(memory) == replayed_state(learner, card)


def test_different_reviews_sent_at_once_under_one_id_record_only_the_first(racer):
    learner, token = racer
    cards = list(Card.objects.filter(deck__slug="tf-data-pipelines", archived=False).order_by("position")[:THREADS])
    at = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    body = review_body(cards[0], 3, at)

    responses = run_together(
        THREADS, lambda index: post_review(client_with_token(token), body | {"card": cards[index].pk})
    )

    statuses = sorted(response.status_code for response in responses)
    assert statuses == [201] + [409] * (THREADS - 1)
    assert {r.json()["error"]["code"] for r in responses if r.status_code == 409} == {"idempotency_key_reused"}
    (log,) = ReviewLog.objects.filter(learner=learner)
    assert [r.json()["card"] for r in responses if r.status_code == 201] == [log.card_id]
    assert list(CardMemory.objects.filter(learner=learner).values_list("card_id", flat=True)) == [log.card_id]


def test_batches_crossing_the_same_cards_in_opposite_orders_neither_deadlock_nor_lose(racer):
    learner, _ = racer
    cards = list(Card.objects.filter(deck__slug="tf-data-pipelines", archived=False).order_by("position")[:6])
    now = datetime.now(UTC)
    base = now - timedelta(days=20)

    def upload(index: int) -> Any:
        ordered = cards if index % 2 == 0 else list(reversed(cards))
        reviews = [
            ReviewInput(
                card_id=card.pk,
                rating=1 + (index + position) % 4,
                client_review_id=uuid.uuid4(),
                reviewed_at=base + timedelta(hours=index, minutes=position),
            )
            for position, card in enumerate(ordered)
            for _ in range(2)
        ]
        return reviews_submit(learner=learner, reviews=reviews, now=now)

    outcomes = run_together(THREADS, upload)

    assert all(outcome.created for batch in outcomes for outcome in batch)
    assert ReviewLog.objects.filter(learner=learner).count() == THREADS * len(cards) * 2
    for card in cards:
        memory = CardMemory.objects.get(learner=learner, card=card)
        assert memory.reps == THREADS * 2
        assert memory_state_of(memory) == replayed_state(learner, card)


def test_an_undo_racing_a_new_review_leaves_a_consistent_card(racer):
    learner, token = racer
    card = Card.objects.filter(deck__slug="tf-data-pipelines", archived=False).order_by("position").first()
    assert card is not None
    client = client_with_token(token)
    now = datetime.now(UTC)
    assert post_review(client, review_body(card, 4, now - timedelta(days=20))).status_code == 201
    latest = post_review(client, review_body(card, 3, now - timedelta(days=5))).json()
    newer = review_body(card, 2, now - timedelta(minutes=1))

    def act(index: int) -> Any:
        if index == 0:
            return client_with_token(token).post(f"/api/v1/reviews/{latest['id']}/undo/")
        return post_review(client_with_token(token), newer)

    undo_response, review_response = run_together(2, act)

    assert review_response.status_code == 201
    # Undo first: it succeeds and the new review follows. Review first: the undo is no longer of the latest.
    assert undo_response.status_code in (200, 409), undo_response.json()
    undone = undo_response.status_code == 200
    assert ReviewLog.objects.filter(learner=learner, kind=ReviewKind.UNDO).count() == int(undone)
    memory = CardMemory.objects.get(learner=learner, card=card)
    assert memory.reps == (2 if undone else 3)
    assert memory_state_of(memory) == replayed_state(learner, card)
