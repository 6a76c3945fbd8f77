"""Which cards a board gets: due first (least retrievable first), then weak ones, then new, then the rest."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from apps.games.models import MatchItem
from apps.games.services import match_cards_pick
from apps.srs.core.population import CardConfigs
from apps.srs.core.scheduling import MemoryStage, SchedulerConfig
from apps.srs.models import CardMemory
from tests.support.games import START, new_board

pytestmark = pytest.mark.django_db


def memory(learner, card, *, kind: str, stability: float = 5.0, save: bool = True) -> CardMemory:
    """A memory row of a given kind at START: due, lapsed (relearning, due soon) or strong (due in a month)."""
    if kind == "due":
        fields = {"stage": MemoryStage.REVIEW, "due": START - timedelta(days=1), "lapses": 0}
        last = START - timedelta(days=10)
    elif kind == "lapsed":
        fields = {"stage": MemoryStage.RELEARNING, "step": 0, "due": START + timedelta(minutes=8), "lapses": 1}
        last = START - timedelta(minutes=2)
    else:
        fields = {"stage": MemoryStage.REVIEW, "due": START + timedelta(days=30), "lapses": 0}
        last = START - timedelta(days=1)
    row = CardMemory(
        learner=learner,
        card=card,
        stability=stability,
        difficulty=5.0,
        last_review=last,
        first_review=last - timedelta(days=20),
        reps=3,
        **fields,
    )
    if save:
        row.save()
    return row


def board_cards(board_id: Any) -> set[int]:
    return set(MatchItem.objects.filter(board_id=board_id).values_list("card_id", flat=True))


def test_due_and_lapsed_cards_are_always_on_the_board_and_well_known_ones_wait(learner, learner_client, cards, clock):
    due = cards[0:3]
    lapsed = cards[3:5]
    strong = cards[5:11]
    new = cards[11:14]
    for card in due:
        memory(learner, card, kind="due")
    for card in lapsed:
        memory(learner, card, kind="lapsed")
    for card in strong:
        memory(learner, card, kind="strong", stability=200.0)

    for _ in range(4):
        chosen = board_cards(new_board(learner_client, pairs=6)["id"])
        assert {card.pk for card in due + lapsed} <= chosen
        # The one place left goes to a new card before any card the learner knows well.
        assert len(chosen & {card.pk for card in new}) == 1
        assert not chosen & {card.pk for card in strong}


def test_the_least_retrievable_due_cards_come_first(learner, learner_client, cards, clock):
    weakest, weaker, firm = cards[0], cards[1], cards[2]
    memory(learner, weakest, kind="due", stability=1.0)
    memory(learner, weaker, kind="due", stability=3.0)
    memory(learner, firm, kind="due", stability=9.0)
    for _ in range(3):
        assert board_cards(new_board(learner_client, pairs=2)["id"]) == {weakest.pk, weaker.pk}


def test_another_learners_memory_does_not_steer_the_board(learner, learner_client, cards, clock):
    from tests.support.api import make_learner

    other, _ = make_learner("other")
    for card in cards[:6]:
        memory(other, card, kind="due")
    for card in cards[6:]:
        memory(learner, card, kind="due")
    assert board_cards(new_board(learner_client, pairs=6)["id"]) <= {card.pk for card in cards[6:]}


def test_the_rule_orders_every_tier(learner, cards):
    """The pure pick, in full: due by retrievability, weak by retrievability, new, then the rest."""
    memories = [
        memory(learner, cards[0], kind="strong", stability=300.0, save=False),
        memory(learner, cards[1], kind="due", stability=8.0, save=False),
        memory(learner, cards[2], kind="lapsed", stability=0.5, save=False),
        memory(learner, cards[3], kind="due", stability=1.0, save=False),
        memory(learner, cards[4], kind="lapsed", stability=4.0, save=False),
    ]
    for row in memories[2], memories[4]:
        # Whole days since the review: FSRS counts elapsed time in days, so minutes would tie.
        row.last_review = START - timedelta(days=2)
    pool = cards[:6]  # cards[5] is new
    picked = match_cards_pick(
        cards=pool, memories=memories, count=6, now=START, configs=CardConfigs(base=SchedulerConfig())
    )
    assert [card.pk for card in picked] == [cards[i].pk for i in (3, 1, 2, 4, 5, 0)]


def test_a_reviewed_card_below_the_learners_retention_counts_as_weak(learner, cards):
    # Not yet due (a future due date), yet its retrievability is under the desired retention.
    row = memory(learner, cards[0], kind="strong", stability=0.2, save=False)
    row.last_review = START - timedelta(days=5)
    picked = match_cards_pick(
        cards=[cards[1], cards[0]], memories=[row], count=1, now=START, configs=CardConfigs(base=SchedulerConfig())
    )
    assert picked == [cards[0]]
