"""The probability that a learner recalls a card now: the one mapper every response and every mastery figure uses.

Pure: a stored memory row (or a scheduling state) and the config of the learner's card in, a figure out.
A card never reviewed has no memory, so no probability (None); mastery counts it as 0.

Mastery is not recall now alone: a card seen a minute ago is recalled now with near certainty and may be
gone in days. A card counts toward mastery by its recall now times how far its stability has come toward
MATURE_STABILITY_DAYS, so a deck is mastered when its cards are both recalled and lasting.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from apps.srs.core.population import CardConfigs
from apps.srs.core.scheduling import MemoryState, retrievability
from apps.srs.models import StoredMemoryState
from apps.srs.reviews.memory import memory_state_of

# A card whose memory lasts this long (days until recall falls to 90 %, under the memory model in use) counts
# fully toward mastery: three weeks, what Anki calls a mature card.
MATURE_STABILITY_DAYS = 21.0


@dataclass(frozen=True)
class CardRecall:
    """The probability of recall at `computed_at` under the learner's own model; None for a new card."""

    probability: float | None
    computed_at: datetime
    # Days until recall falls to 90 % (the card's factor applied); None for a new card.
    stability: float | None = None


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
        return CardRecall(
            probability=retrievability(state, now=self.now, config=config),
            computed_at=self.now,
            stability=state.stability * config.stability_factor,
        )

    def of_memory(self, memory: StoredMemoryState | None, *, card_id: int | None) -> CardRecall:
        """From a stored row, read through `memory_state_of` so every stored value is in FSRS's range."""
        return self.of_state(memory_state_of(memory), card_id=card_id)


def mastery_contribution(recall: CardRecall) -> float:
    """What one card adds to its deck's or concept's mastery before dividing by the cards: its recall now times
    its stability's share of MATURE_STABILITY_DAYS (at most 1); 0 if new."""
    if recall.probability is None or recall.stability is None:
        return 0.0
    return recall.probability * min(1.0, recall.stability / MATURE_STABILITY_DAYS)


def mastery_of(recalls: Iterable[CardRecall], *, cards_total: int) -> float:
    """Mean mastery contribution over `cards_total` cards, the cards not in `recalls` (never studied) counting 0."""
    if cards_total <= 0:
        return 0.0
    return sum(mastery_contribution(recall) for recall in recalls) / cards_total
