"""The probability that a learner recalls a card now: the one mapper every response and every mastery figure uses.

Pure: a stored memory row (or a scheduling state) and the config of the learner's card in, a figure out.
A card never reviewed has no memory, so no probability (None); mastery counts it as 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from apps.srs.core.population import CardConfigs
from apps.srs.core.scheduling import MemoryState, retrievability
from apps.srs.models import StoredMemoryState
from apps.srs.reviews.memory import memory_state_of


@dataclass(frozen=True)
class CardRecall:
    """The probability of recall at `computed_at` under the learner's own model; None for a new card."""

    probability: float | None
    computed_at: datetime


@dataclass(frozen=True)
class RecallBasis:
    """What a probability of recall is computed from besides the card: the config of each of the learner's
    cards (the memory model in use for it) and the moment."""

    configs: CardConfigs
    now: datetime

    def of_state(self, state: MemoryState | None, *, card_id: int | None) -> CardRecall:
        """`card_id` None: something other than a card (a quiz question), under the learner's own weights."""
        if state is None:
            return CardRecall(probability=None, computed_at=self.now)
        config = self.configs.base if card_id is None else self.configs.of(card_id)
        return CardRecall(probability=retrievability(state, now=self.now, config=config), computed_at=self.now)

    def of_memory(self, memory: StoredMemoryState | None, *, card_id: int | None) -> CardRecall:
        """From a stored row, read through `memory_state_of` so every stored value is in FSRS's range."""
        return self.of_state(memory_state_of(memory), card_id=card_id)


def mastery_contribution(recall: CardRecall) -> float:
    """What one card adds to its deck's or concept's mastery before dividing by the cards: its recall, 0 if new."""
    return recall.probability if recall.probability is not None else 0.0


def mastery_of(recalls: Iterable[CardRecall], *, cards_total: int) -> float:
    """Mean probability of recall over `cards_total` cards, the cards not in `recalls` (never studied) counting 0."""
    if cards_total <= 0:
        return 0.0
    return sum(mastery_contribution(recall) for recall in recalls) / cards_total
