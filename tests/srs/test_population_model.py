"""The population model's factors: learned from the course's reviews, shrunk where a card or a learner has few."""

from __future__ import annotations

import math
import random

import pytest

from apps.srs.core.population import Observation, PopulationFactors, population_fit, recall_with_factor

DECAY = 0.2


def _course(*, cards: dict[str, float], learners: dict[str, float], reviews_each: int, seed: int) -> list[Observation]:
    """Every learner reviews every card `reviews_each` times at random waits; recall drawn from the true factors."""
    rng = random.Random(seed)  # noqa: S311 - simulated outcomes, not a secret
    observations = []
    for learner, learner_factor in learners.items():
        for card, card_factor in cards.items():
            for _ in range(reviews_each):
                predicted = rng.uniform(0.55, 0.97)
                truth = recall_with_factor(predicted, decay=DECAY, log_factor=card_factor + learner_factor)
                observations.append(Observation(learner, card, predicted, recalled=rng.random() < truth))
    return observations


def _correlation(left: list[float], right: list[float]) -> float:
    mean_left, mean_right = sum(left) / len(left), sum(right) / len(right)
    covariance = sum((a - mean_left) * (b - mean_right) for a, b in zip(left, right, strict=True))
    spread_left = math.sqrt(sum((a - mean_left) ** 2 for a in left))
    spread_right = math.sqrt(sum((b - mean_right) ** 2 for b in right))
    return covariance / (spread_left * spread_right)


def test_the_factors_of_cards_and_learners_are_recovered_from_their_outcomes():
    rng = random.Random(3)  # noqa: S311
    cards = {f"card-{n}": rng.gauss(0.0, 0.8) for n in range(40)}
    learners = {f"learner-{n}": rng.gauss(0.0, 0.4) for n in range(30)}
    factors = population_fit(_course(cards=cards, learners=learners, reviews_each=6, seed=4), decay=DECAY)
    assert _correlation([factors.cards[card] for card in cards], list(cards.values())) > 0.9
    assert _correlation([factors.learners[learner] for learner in learners], list(learners.values())) > 0.9
    # The spreads are learned from the course, not left where they started (1.0 and 0.5).
    assert 0.6 < factors.card_spread < 1.0
    assert 0.25 < factors.learner_spread < 0.6


def test_a_course_as_its_weights_predict_has_factors_near_zero_and_narrow_spreads():
    rng = random.Random(5)  # noqa: S311
    cards = {f"card-{n}": 0.0 for n in range(30)}
    learners = {f"learner-{n}": 0.0 for n in range(20)}
    factors = population_fit(
        _course(cards=cards, learners=learners, reviews_each=4, seed=rng.randrange(99)), decay=DECAY
    )
    assert max(abs(value) for value in factors.cards.values()) < 0.35
    assert factors.card_spread < 0.3


def test_a_card_seen_once_is_shrunk_toward_the_course_and_one_seen_often_follows_its_outcomes():
    observations = [Observation(f"learner-{n}", "often-forgotten", 0.9, recalled=n % 4 == 0) for n in range(80)]
    observations += [Observation("learner-0", "seen-once", 0.9, recalled=False)]
    observations += [Observation(f"learner-{n}", "as-predicted", 0.9, recalled=n % 10 != 0) for n in range(80)]
    observations += [Observation(f"learner-{n}", "always-recalled", 0.6, recalled=True) for n in range(80)]
    factors = population_fit(observations, decay=DECAY)
    assert factors.cards["often-forgotten"] < factors.cards["seen-once"] < 0
    assert abs(factors.cards["as-predicted"]) < 0.2
    assert factors.cards["always-recalled"] > 0.5


def test_a_learner_or_card_never_seen_is_what_the_weights_say():
    factors = PopulationFactors(cards={"known": -0.5}, learners={"veteran": 0.3}, card_spread=1.0, learner_spread=0.5)
    assert factors.factor(learner="newcomer", card="unknown") == 0.0
    assert factors.factor(learner="veteran", card="known") == pytest.approx(-0.2)
    assert recall_with_factor(0.8, decay=DECAY, log_factor=0.0) == 0.8


def test_a_longer_stability_raises_recall_and_a_shorter_lowers_it_more_the_longer_the_wait():
    soon, late = 0.95, 0.6
    assert recall_with_factor(soon, decay=DECAY, log_factor=0.7) > soon
    assert recall_with_factor(late, decay=DECAY, log_factor=-0.7) < late
    assert late - recall_with_factor(late, decay=DECAY, log_factor=-0.7) > soon - recall_with_factor(
        soon, decay=DECAY, log_factor=-0.7
    )
    # At the stability itself (0.9 at any decay) a factor of e² scales the wait by e^-2.
    gap = 0.9 ** (-1 / DECAY) - 1
    assert recall_with_factor(0.9, decay=DECAY, log_factor=2.0) == pytest.approx((1 + gap * math.exp(-2)) ** -DECAY)
