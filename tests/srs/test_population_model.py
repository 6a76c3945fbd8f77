"""The population model: factors learned from the course's reviews, and a card's schedule and recall under them."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from apps.srs.core.population import (
    FACTOR_BOUND,
    FACTOR_STEP,
    FIRST_STABILITY_OFFSETS,
    INITIAL_FIRST_STABILITY_SPREAD,
    CardConfigs,
    CourseModelInUse,
    Observation,
    PopulationFactors,
    first_stabilities_applied,
    first_stabilities_fit,
    first_stability_offsets_in_use,
    population_fit,
    recall_with_factor,
    stability_factor_of,
)
from apps.srs.core.scheduling import (
    DEFAULT_PARAMETERS,
    MemoryStage,
    MemoryState,
    Rating,
    SchedulerConfig,
    retrievability,
    review,
)
from apps.srs.settings.config import scheduler_config_digest, scheduler_config_from_json, scheduler_config_json

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


START = datetime(2026, 3, 2, 18, 0, tzinfo=UTC)


def _reviewed_once() -> MemoryState:
    """A card rated Easy once: in the review stage, its stability the Easy weight's."""
    state = review(None, rating=Rating.EASY, reviewed_at=START, config=SchedulerConfig(), fuzz_seed="population")
    assert state.stage == MemoryStage.REVIEW
    return state


def test_a_stability_factor_scales_the_interval_and_recall_is_the_desired_retention_when_due():
    state = _reviewed_once()
    base = SchedulerConfig(desired_retention=0.9)
    longer = replace(base, stability_factor=2.0)
    shorter = replace(base, stability_factor=0.5)
    unfuzzed = {config: config.scheduler()._next_interval(stability=30.0) for config in (base, longer, shorter)}
    # The interval at which recall, read at the stability times the factor, falls to the desired retention.
    assert abs(unfuzzed[longer] - 2 * unfuzzed[base]) <= 1
    assert abs(unfuzzed[shorter] - unfuzzed[base] / 2) <= 1
    for config in (base, longer, shorter):
        due = START + timedelta(days=unfuzzed[config])
        read = replace(state, stability=30.0)
        assert retrievability(read, now=due, config=config) == pytest.approx(0.9, abs=0.01)


def test_recall_under_a_factor_is_the_curve_at_the_longer_stability():
    state = _reviewed_once()
    later = START + timedelta(days=12)
    base = retrievability(state, now=later, config=SchedulerConfig())
    harder = retrievability(state, now=later, config=SchedulerConfig(stability_factor=math.exp(-0.8)))
    assert harder < base
    assert harder == pytest.approx(recall_with_factor(base, decay=DEFAULT_PARAMETERS[20], log_factor=-0.8), abs=1e-9)


def test_a_card_of_a_course_model_gets_its_weights_and_factor_and_any_other_card_the_learners_own():
    base = SchedulerConfig(desired_retention=0.85, parameters=DEFAULT_PARAMETERS)
    course_weights = tuple(weight * 1.01 for weight in DEFAULT_PARAMETERS)
    model = CourseModelInUse(
        memory_model_id=1, course_id=7, parameters=course_weights, card_factors={10: -0.5, 11: 0.0}, learner_factor=0.2
    )
    configs = CardConfigs(base=base, models=(model,))
    hard = configs.of(10)
    assert (hard.parameters, hard.desired_retention) == (course_weights, 0.85)
    assert hard.stability_factor == stability_factor_of(-0.3) == pytest.approx(math.exp(-0.3))
    assert configs.of(11).stability_factor == stability_factor_of(0.2)
    assert configs.of(99) is base
    # Equal configs are one object: the scheduler and preview memos hash each once.
    assert configs.of(10) is hard


def test_factors_in_use_are_rounded_and_bounded():
    assert stability_factor_of(0.0) == 1.0
    assert stability_factor_of(0.012) == 1.0
    assert stability_factor_of(0.03) == round(math.exp(FACTOR_STEP), 6)
    assert stability_factor_of(10.0) == round(math.exp(FACTOR_BOUND), 6)
    assert stability_factor_of(-10.0) == round(math.exp(-FACTOR_BOUND), 6)


def test_a_profile_without_a_factor_keeps_its_digest_and_one_with_it_round_trips():
    plain = SchedulerConfig(desired_retention=0.88)
    assert "stability_factor" not in scheduler_config_json(plain)
    assert scheduler_config_from_json(scheduler_config_json(plain)) == plain
    factored = replace(plain, stability_factor=1.284025)
    data = scheduler_config_json(factored)
    assert data["stability_factor"] == 1.284025
    assert scheduler_config_from_json(data) == factored
    assert scheduler_config_digest(factored) != scheduler_config_digest(plain)


def _likelihood(mode: float, information: float) -> list[float]:
    """A learner's log-likelihood over the grid: peaked at `mode`, as sharp as `information` says."""
    return [-information * (offset - mode) ** 2 / 2 for offset in FIRST_STABILITY_OFFSETS]


def test_a_learners_first_stabilities_follow_their_reviews_as_far_as_those_reviews_are_many():
    rng = random.Random(8)  # noqa: S311
    # Twenty learners whose Good first stabilities spread about e^±0.4 around the course's, well measured.
    curves = {(f"learner-{n}", 3): _likelihood(rng.gauss(0.0, 0.4), information=400.0) for n in range(20)}
    curves["veteran", 3] = _likelihood(1.0, information=400.0)
    curves["newcomer", 3] = _likelihood(1.0, information=4.0)
    curves["newcomer", 1] = _likelihood(-1.2, information=4.0)
    fitted = first_stabilities_fit(curves)
    veteran, newcomer = fitted.learners["veteran"], fitted.learners["newcomer"]
    # Between grid points the mode is found by the parabola through its neighbours.
    assert veteran[2] == pytest.approx(1.0, abs=0.02)
    # A dozen reviews move a newcomer only part of the way toward what they say.
    assert 0.05 < newcomer[2] < 0.6
    assert -1.2 < newcomer[0] < 0.0
    # No card first rated Hard or Easy: the course's stabilities stand.
    assert (veteran[1], veteran[3], newcomer[1], newcomer[3]) == (0.0, 0.0, 0.0, 0.0)
    # The spread is learned from the learners, not left where it started.
    assert 0.3 < fitted.spreads[2] < 0.6
    assert fitted.spreads[2] != INITIAL_FIRST_STABILITY_SPREAD


def test_first_stabilities_are_applied_to_the_first_four_weights_rounded_and_in_bounds():
    applied = first_stabilities_applied(DEFAULT_PARAMETERS, (0.0, -0.5, math.log(3.0), 0.0))
    assert applied[0] == DEFAULT_PARAMETERS[0] and applied[3] == DEFAULT_PARAMETERS[3]
    assert applied[1] == pytest.approx(DEFAULT_PARAMETERS[1] * math.exp(-0.5), abs=1e-6)
    assert applied[2] == pytest.approx(DEFAULT_PARAMETERS[2] * 3.0, abs=1e-6)
    assert applied[4:] == DEFAULT_PARAMETERS[4:]
    assert first_stabilities_applied(DEFAULT_PARAMETERS, ()) == DEFAULT_PARAMETERS
    assert first_stabilities_applied(DEFAULT_PARAMETERS, (-50.0, 0.0, 0.0, 50.0))[::3][:2] == (0.001, 100.0)
    assert first_stability_offsets_in_use((0.012, 0.03, -0.26, 9.0)) == pytest.approx(
        (0.0, FACTOR_STEP, -0.25, FACTOR_BOUND)
    )
