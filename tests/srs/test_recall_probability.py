"""The probability of recall every card state carries, and mastery as the mean of those same figures."""

from __future__ import annotations

import math
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from apps.accounts.export import account_export
from apps.content.models import Card, Concept, Deck
from apps.srs.core.population import CardConfigs
from apps.srs.core.scheduling import DEFAULT_PARAMETERS, MemoryStage, MemoryState, SchedulerConfig, retrievability
from apps.srs.models import CardMemory
from apps.srs.progress.stats import learner_stats_get
from apps.srs.reviews.memory import memory_state_of
from apps.srs.reviews.recall import (
    MATURE_STABILITY_DAYS,
    CardRecall,
    RecallBasis,
    mastery_contribution,
    mastery_of,
)
from apps.srs.reviews.selectors import study_queue_get
from apps.srs.reviews.services import ReviewInput, reviews_submit
from apps.srs.settings.config import scheduler_config_get
from apps.srs.settings.services import scheduling_settings_update
from tests.support.explore import constellation_of
from tests.support.reviews import DECK, post_review, review_body

pytestmark = pytest.mark.django_db

COURSE = "tensorflow-ai-phd"
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
# Far from the defaults and within FSRS's bounds: a learner whose memory fades much faster.
FAST_FORGETTER = (0.1, 0.2, 0.5, 2.0, *DEFAULT_PARAMETERS[4:20], 0.8)


def _submit(learner: Any, card: Card, rating: int, at: datetime) -> None:
    reviews_submit(
        learner=learner,
        reviews=[ReviewInput(card_id=card.pk, rating=rating, client_review_id=uuid.uuid4(), reviewed_at=at)],
        now=NOW,
    )


@pytest.fixture
def studied(learner, deck_cards) -> list[Card]:
    """Three cards studied at different times, so each has its own recall at NOW; the rest are new."""
    scheduling_settings_update(learner=learner, changes={"timezone": "UTC", "day_start_hour": 0})
    # Long overdue, so all three are in the study queue at NOW.
    for offset, card in enumerate(deck_cards[:3]):
        _submit(learner, card, 3, NOW - timedelta(days=400 + 7 * offset))
        _submit(learner, card, 3 + offset % 2, NOW - timedelta(days=390 + 7 * offset))
    return deck_cards[:3]


def _expected(learner: Any, card: Card, *, config: SchedulerConfig) -> float:
    memory = CardMemory.objects.get(learner=learner, card=card)
    return retrievability(memory_state_of(memory), now=NOW, config=config)


def test_the_mapper_gives_none_for_a_new_card_and_the_retrievability_otherwise(learner, studied):
    config = SchedulerConfig()
    basis = RecallBasis(configs=CardConfigs(base=config), now=NOW)
    assert basis.of_memory(None, card_id=studied[1].pk) == CardRecall(probability=None, computed_at=NOW)
    memory = CardMemory.objects.get(learner=learner, card=studied[0])
    recall = basis.of_memory(memory, card_id=studied[0].pk)
    assert recall.probability == _expected(learner, studied[0], config=config)
    assert 0 < recall.probability < 1
    assert recall.stability == memory.stability
    assert mastery_contribution(basis.of_memory(None, card_id=studied[1].pk)) == 0.0
    weighed = recall.probability * min(1.0, memory.stability / MATURE_STABILITY_DAYS)
    assert mastery_contribution(recall) == pytest.approx(weighed, rel=1e-12)
    assert mastery_of([recall, basis.of_memory(None, card_id=studied[1].pk)], cards_total=4) == pytest.approx(
        weighed / 4, rel=1e-12
    )
    assert mastery_of([], cards_total=0) == 0.0


def test_a_card_just_seen_is_recalled_now_but_far_from_mastered_and_a_lasting_one_counts_whole():
    basis = RecallBasis(configs=CardConfigs(base=SchedulerConfig()), now=NOW)
    seen_once = MemoryState(
        stage=MemoryStage.LEARNING,
        step=1,
        stability=2.3,
        difficulty=5.0,
        due=NOW,
        last_review=NOW - timedelta(minutes=1),
    )
    just = basis.of_state(seen_once, card_id=None)
    assert just.probability is not None and just.probability > 0.99
    assert mastery_contribution(just) < 0.12
    lasting = replace(seen_once, stage=MemoryStage.REVIEW, stability=60.0)
    assert mastery_contribution(basis.of_state(lasting, card_id=None)) == pytest.approx(
        basis.of_state(lasting, card_id=None).probability
    )
    # Under a course model the card's factor lengthens (or shortens) what counts as lasting.
    longer = RecallBasis(configs=CardConfigs(base=SchedulerConfig(stability_factor=math.exp(2.0))), now=NOW).of_state(
        seen_once, card_id=None
    )
    assert longer.stability == pytest.approx(2.3 * math.exp(2.0))
    assert mastery_contribution(longer) > 5 * mastery_contribution(just)
    assert mastery_of([], cards_total=0) == 0.0


def test_study_items_carry_the_recall_under_the_learners_own_parameters(learner, studied):
    deck = Deck.objects.get(slug=DECK)
    default_queue = study_queue_get(learner=learner, deck=deck, now=NOW, limit=10)
    scheduling_settings_update(learner=learner, changes={"fsrs_parameters": list(FAST_FORGETTER)})
    # As the next request would: the learner read afresh, not with the settings an earlier review cached on it.
    learner = get_user_model().objects.get(pk=learner.pk)
    own_config = scheduler_config_get(learner=learner)
    queue = study_queue_get(learner=learner, deck=deck, now=NOW, limit=10)

    by_card = {item.card.pk: item.recall for item in queue.items}
    for card in studied:
        expected = _expected(learner, card, config=own_config)
        assert (by_card[card.pk].probability, by_card[card.pk].computed_at) == (expected, NOW)
        default_recall = next(item.recall for item in default_queue.items if item.card.pk == card.pk)
        # Not the defaults' figure: the learner's own model forgets faster.
        own, default = by_card[card.pk].probability, default_recall.probability
        assert own is not None and default is not None
        assert own < default
    new_items = [item for item in queue.items if item.queue == "new"]
    assert new_items and all(item.recall.probability is None for item in new_items)


def test_deck_and_concept_mastery_add_up_each_cards_contribution(learner, studied):
    deck = Deck.objects.get(slug=DECK)
    recall = {item.card.pk: item.recall for item in study_queue_get(learner=learner, deck=deck, now=NOW).items}
    assert all(recall[card.pk].probability is not None for card in studied)

    (deck_stats,) = learner_stats_get(learner=learner, now=NOW, deck_slug=DECK).decks
    assert deck_stats.mastery * deck_stats.total == pytest.approx(
        sum(mastery_contribution(recall[card.pk]) for card in studied), rel=1e-12
    )

    # A concept holding one studied card: its mastery is that card's recall over the concept's cards.
    concept = Concept.objects.filter(course__slug=COURSE, cards=studied[0]).first()
    assert concept is not None
    node = next(node for node in constellation_of(learner=learner, now=NOW).nodes if node.concept.pk == concept.pk)
    contributions = [mastery_contribution(recall[card.pk]) for card in node.cards if card.pk in recall]
    assert node.mastery * node.cards_total == pytest.approx(sum(contributions), rel=1e-12)
    assert node.cards_studied == sum(1 for card in node.cards if CardMemory.objects.filter(card=card).exists())


def test_the_study_endpoint_and_a_review_answer_carry_recall_and_its_time(learner, learner_client, deck_cards):
    reviewed = post_review(learner_client, review_body(deck_cards[0], 3, datetime.now(UTC) - timedelta(days=3)))
    assert reviewed.status_code == 201, reviewed.json()
    body = reviewed.json()
    # Reviewed three days ago: recall has fallen below certainty, to what the stored state gives now.
    assert 0.5 < body["recall_probability"] < 1
    computed_at = datetime.fromisoformat(body["recall_computed_at"])
    assert abs(computed_at - datetime.now(UTC)) < timedelta(minutes=5)

    cards = learner_client.get(f"/api/v1/decks/{DECK}/study/").json()["cards"]
    by_card = {item["card"]["id"]: item for item in cards}
    studied = by_card[deck_cards[0].pk]
    memory = CardMemory.objects.get(learner=learner, card=deck_cards[0])
    at = datetime.fromisoformat(studied["recall_computed_at"])
    assert studied["recall_probability"] == retrievability(memory_state_of(memory), now=at, config=SchedulerConfig())
    assert all(item["recall_probability"] is None for item in cards if item["state"] is None)


def test_the_export_carries_each_card_memorys_recall_at_the_export_time(learner, studied):
    document = account_export(learner=learner, now=NOW)
    memories = {row["card_id"]: row for row in document["srs"]["card_memories"]}
    assert set(memories) == {card.pk for card in studied}
    config = scheduler_config_get(learner=learner)
    for card in studied:
        assert memories[card.pk]["recall_probability"] == _expected(learner, card, config=config)
        assert memories[card.pk]["recall_computed_at"] == NOW
