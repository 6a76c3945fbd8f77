"""What a course's learners teach the scheduler about its cards, and each learner about themselves: pure, no I/O.

FSRS-6 tracks each card's stability S under the course's weights; the population model says how long a
card is really remembered: S times e^(card factor + learner factor). A card that everyone forgets has a
negative factor, a learner who remembers everything longer than the weights say has a positive one.
Recall after t days is then FSRS-6's curve at that longer or shorter stability,

    p = (1 + F t / (S e^c))^(-decay),

so the factor matters more the longer the wait, and nothing at t = 0, as a card's difficulty should.
(A shift in log-odds, tried first, moves every prediction alike: on the benchmark's courses it closed
29-67 % of the newcomers' gap where this closes more; docs/memory-model.md has the figures.)

The factors are fitted as crossed random effects: each card's and each learner's factor has a normal
prior at 0 whose spread is learned from the course (empirical Bayes), so a card few learners saw, or
a newcomer with a dozen reviews, stays close to what the course's weights say, and moves toward their
own as their reviews come in. Fitting alternates Fisher scoring on the cards and on the learners.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from apps.srs.core.scheduling import SchedulerConfig

# Where the spreads start, in natural log of stability: a card remembered e (2.7) times as long or as
# short as the weights say is one spread out; learners differ less than cards do in most courses.
INITIAL_CARD_SPREAD = 1.0
INITIAL_LEARNER_SPREAD = 0.5
# Spreads are kept in these bounds: too narrow and the model cannot move off the weights at all, too
# wide and a card seen twice would follow its two outcomes.
SPREAD_BOUNDS = (0.05, 2.0)
# A factor is kept in these bounds (e^±3: 20 times as long or as short).
FACTOR_BOUND = 3.0
# A factor in use is rounded to this step of its log (5 %): each distinct factor is a scheduler config
# and a stored profile, so a course has at most a couple of hundred, and 5 % moves an interval by a day
# in twenty.
FACTOR_STEP = 0.05
_ROUNDS = 8
_SCORING_STEPS = 6
_PROBABILITY_FLOOR = 1e-6


@dataclass(frozen=True, slots=True)
class Observation:
    """One long-term review, as the course's weights predicted it."""

    learner: str
    card: str
    # The course's weights' probability of recall, from the card's reviews before this one.
    predicted: float
    recalled: bool


@dataclass(frozen=True, slots=True)
class PopulationFactors:
    """Each card's and each learner's factor (natural log of the stability multiplier), and their spreads."""

    cards: Mapping[str, float]
    learners: Mapping[str, float]
    card_spread: float
    learner_spread: float

    def factor(self, *, learner: str, card: str) -> float:
        """The log factor for this learner's review of this card: 0 for a card or learner never seen."""
        return self.cards.get(card, 0.0) + self.learners.get(learner, 0.0)


def log_factor_in_use(log_factor: float) -> float:
    """A log factor as scheduling uses it: kept in bounds and rounded to FACTOR_STEP."""
    bounded = max(-FACTOR_BOUND, min(FACTOR_BOUND, float(log_factor)))
    return round(bounded / FACTOR_STEP) * FACTOR_STEP


def stability_factor_of(log_factor: float) -> float:
    """The multiplier a scheduler config carries for this log factor (`log_factor_in_use`)."""
    return round(math.exp(log_factor_in_use(log_factor)), 6)


def _curve_gap(predicted: float, decay: float) -> float:
    """F t / S from a prediction: what the curve's argument was, before any factor."""
    probability = min(max(predicted, _PROBABILITY_FLOOR), 1 - _PROBABILITY_FLOOR)
    return float(probability ** (-1 / decay) - 1)


def recall_with_factor(predicted: float, *, decay: float, log_factor: float) -> float:
    """The weights' prediction, with the card's stability multiplied by e^log_factor."""
    if log_factor == 0.0:
        return predicted
    return float((1 + _curve_gap(predicted, decay) * math.exp(-log_factor)) ** -decay)


def _scored(
    groups: Mapping[str, list[tuple[float, float, bool]]], *, decay: float, spread: float
) -> tuple[dict[str, float], float]:
    """Each group's factor given every other factor (Fisher scoring), and the spread those factors imply.

    Each entry is (the curve's argument, the other factor already applied, whether recalled). The new
    spread is the EM update: the mean of factor² plus its posterior variance.
    """
    precision = 1 / spread**2
    found: dict[str, float] = {}
    second_moment = 0.0
    for group, entries in groups.items():
        factor = 0.0
        information = precision
        for _ in range(_SCORING_STEPS):
            score = -precision * factor
            information = precision
            for gap, other, recalled in entries:
                scaled = gap * math.exp(-(factor + other))
                probability = min(max((1 + scaled) ** -decay, _PROBABILITY_FLOOR), 1 - _PROBABILITY_FLOOR)
                slope = probability * decay * scaled / (1 + scaled)
                score += (float(recalled) - probability) * slope / (probability * (1 - probability))
                information += slope * slope / (probability * (1 - probability))
            step = score / information
            factor = max(-FACTOR_BOUND, min(FACTOR_BOUND, factor + step))
            if abs(step) < 1e-6:
                break
        found[group] = factor
        second_moment += factor * factor + 1 / information
    new_spread = math.sqrt(second_moment / len(groups)) if groups else spread
    return found, min(max(new_spread, SPREAD_BOUNDS[0]), SPREAD_BOUNDS[1])


def population_fit(observations: Sequence[Observation], *, decay: float) -> PopulationFactors:
    """Every card's and learner's factor from the course's reviews, as the weights (with `decay`) predicted them."""
    gaps = [_curve_gap(observation.predicted, decay) for observation in observations]
    cards: dict[str, float] = {}
    learners: dict[str, float] = {}
    card_spread, learner_spread = INITIAL_CARD_SPREAD, INITIAL_LEARNER_SPREAD
    for _ in range(_ROUNDS):
        by_card: dict[str, list[tuple[float, float, bool]]] = defaultdict(list)
        for observation, gap in zip(observations, gaps, strict=True):
            by_card[observation.card].append((gap, learners.get(observation.learner, 0.0), observation.recalled))
        cards, card_spread = _scored(by_card, decay=decay, spread=card_spread)
        by_learner: dict[str, list[tuple[float, float, bool]]] = defaultdict(list)
        for observation, gap in zip(observations, gaps, strict=True):
            by_learner[observation.learner].append((gap, cards[observation.card], observation.recalled))
        learners, learner_spread = _scored(by_learner, decay=decay, spread=learner_spread)
    return PopulationFactors(cards=cards, learners=learners, card_spread=card_spread, learner_spread=learner_spread)


# A learner's own first stabilities: how long they remember a card after its first rating (Again, Hard,
# Good, Easy), as the natural log of a multiplier of the course's w0-w3. Searched on this grid of log
# offsets (e^±2: 7.4 times as long or as short) and refined between its points.
FIRST_RATINGS = (1, 2, 3, 4)
FIRST_STABILITY_OFFSETS = tuple(step * 0.125 for step in range(-16, 17))
INITIAL_FIRST_STABILITY_SPREAD = 0.5
_FIRST_STABILITY_ROUNDS = 20
# fsrs's bounds on an initial stability, in days.
_FIRST_STABILITY_BOUNDS = (0.001, 100.0)


@dataclass(frozen=True, slots=True)
class FirstStabilities:
    """Each learner's log offsets of the four first stabilities, and how far learners spread on each."""

    learners: Mapping[str, tuple[float, float, float, float]]
    spreads: tuple[float, float, float, float]


def first_stabilities_fit(curves: Mapping[tuple[str, int], Sequence[float]]) -> FirstStabilities:
    """Each learner's first-stability offsets, shrunk toward the course's, from their likelihood curves.

    `curves[learner, rating]` is the log-likelihood of the learner's reviews of cards first rated
    `rating`, with that first stability multiplied by e^offset, at each of FIRST_STABILITY_OFFSETS.
    Each offset has a normal prior at 0 whose spread per rating is learned from every learner (EM, with
    the curvature at the mode as the posterior's precision), so a newcomer with a dozen reviews keeps
    nearly the course's stabilities and a veteran gets their own. A learner with no card first given a
    rating keeps the course's stability for it.
    """
    spreads = dict.fromkeys(FIRST_RATINGS, INITIAL_FIRST_STABILITY_SPREAD)
    offsets: dict[tuple[str, int], float] = {}
    step = FIRST_STABILITY_OFFSETS[1] - FIRST_STABILITY_OFFSETS[0]
    last = len(FIRST_STABILITY_OFFSETS) - 1
    for _ in range(_FIRST_STABILITY_ROUNDS):
        moments: dict[int, list[float]] = defaultdict(list)
        for (learner, rating), curve in curves.items():
            precision = 1 / spreads[rating] ** 2
            penalized = [
                value - precision * offset * offset / 2
                for value, offset in zip(curve, FIRST_STABILITY_OFFSETS, strict=True)
            ]
            best = max(range(len(penalized)), key=penalized.__getitem__)
            centre = min(max(best, 1), last - 1)
            left, middle, right = penalized[centre - 1], penalized[centre], penalized[centre + 1]
            bend = left - 2 * middle + right
            # The parabola through the three points around the best one, where it is one.
            shift = (left - right) / (2 * bend) * step if bend < 0 else 0.0
            offset = FIRST_STABILITY_OFFSETS[centre] + max(-step, min(step, shift))
            offsets[learner, rating] = offset
            moments[rating].append(offset * offset + 1 / max(-bend / step**2, precision))
        spreads |= {
            rating: min(max(math.sqrt(sum(values) / len(values)), SPREAD_BOUNDS[0]), SPREAD_BOUNDS[1])
            for rating, values in moments.items()
        }
    learners = {learner for learner, _ in curves}
    return FirstStabilities(
        learners={
            learner: (
                offsets.get((learner, 1), 0.0),
                offsets.get((learner, 2), 0.0),
                offsets.get((learner, 3), 0.0),
                offsets.get((learner, 4), 0.0),
            )
            for learner in sorted(learners)
        },
        spreads=(spreads[1], spreads[2], spreads[3], spreads[4]),
    )


def first_stabilities_applied(parameters: Sequence[float], log_offsets: Sequence[float]) -> tuple[float, ...]:
    """The weights with their first stabilities (w0-w3) multiplied by e^offset each, kept in fsrs's bounds."""
    found = list(parameters)
    for index, offset in enumerate(log_offsets[: len(FIRST_RATINGS)]):
        found[index] = round(
            min(max(parameters[index] * math.exp(offset), _FIRST_STABILITY_BOUNDS[0]), _FIRST_STABILITY_BOUNDS[1]), 6
        )
    return tuple(found)


def first_stability_offsets_in_use(log_offsets: Sequence[float]) -> tuple[float, ...]:
    """Stored offsets as scheduling uses them: rounded to FACTOR_STEP, as factors are, so that a learner's
    weights change (and get a new stored profile) only when a training moves them by 5 % or more."""
    return tuple(log_factor_in_use(offset) for offset in log_offsets[: len(FIRST_RATINGS)])


@dataclass(frozen=True, slots=True)
class CourseModelInUse:
    memory_model_id: int
    course_id: int
    # The course's weights, with the learner's own first stabilities where the training found them.
    parameters: tuple[float, ...]
    # Every card of the course when it was trained, by id: the log of its stability factor.
    card_factors: Mapping[int, float]
    learner_factor: float


@dataclass(frozen=True, slots=True)
class CardConfigs:
    """The config each of a learner's cards is scheduled with."""

    base: SchedulerConfig
    models: tuple[CourseModelInUse, ...] = ()

    def of(self, card_id: int) -> SchedulerConfig:
        """The course's weights and the card's factor where the course's model is in use; else the learner's own."""
        for model in self.models:
            card_factor = model.card_factors.get(card_id)
            if card_factor is not None:
                return _course_config(
                    self.base, model.parameters, stability_factor_of(card_factor + model.learner_factor)
                )
        return self.base


@lru_cache(maxsize=4096)
def _course_config(base: SchedulerConfig, parameters: tuple[float, ...], factor: float) -> SchedulerConfig:
    # One object per distinct config: the scheduler and preview memos hash it once.
    return replace(base, parameters=parameters, stability_factor=factor)
