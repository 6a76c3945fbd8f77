"""Leeches: cards a learner keeps forgetting, as flagged by the review service, and unsuspending them."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from apps.common.errors import NotFound
from apps.content.models import visible_card_filter
from apps.srs.models import CardMemory

# Ids are 64-bit (bigint): a larger number cannot be bound as one, and no card has one.
MAX_ID = 2**63 - 1


def leeches_list(*, learner: Any, deck_slug: str | None = None) -> QuerySet[CardMemory]:
    """The learner's leeches among the cards they can study, most lapses first; with deck_slug, that deck's."""
    leeches = CardMemory.objects.filter(visible_card_filter("card__"), learner=learner, is_leech=True).select_related(
        "card__deck"
    )
    if deck_slug is not None:
        leeches = leeches.filter(card__deck__slug=deck_slug)
    return leeches.order_by("-lapses", "card__deck_id", "card__position", "pk")


def leech_unsuspend(*, learner: Any, card_id: int) -> CardMemory:
    """Return a suspended card to the learner's study queue; it stays flagged as a leech.

    Unsuspending a card that is not suspended changes nothing, so a client may safely retry.
    """
    if not 1 <= card_id <= MAX_ID:
        raise NotFound(f"You have not studied card {card_id}.")
    with transaction.atomic():
        # Locked like the review service locks it, so a review at the same moment cannot undo this.
        memory = (
            CardMemory.objects.select_for_update(of=("self",))
            .select_related("card__deck")
            .filter(learner=learner, card_id=card_id)
            .first()
        )
        if memory is None:
            raise NotFound(f"You have not studied card {card_id}.")
        if memory.suspended:
            memory.suspended = False
            memory.save(update_fields=["suspended", "updated_at"])
    return memory
