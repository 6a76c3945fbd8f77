"""Deck passes: recording a finished pass once, its history, and the best score per deck."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, DurationField, ExpressionWrapper, F, FloatField, QuerySet, Window
from django.db.models.functions import Cast, RowNumber

from apps.common.clock import latest_client_time
from apps.common.errors import DomainError, IdempotencyKeyReused
from apps.content.models import Deck
from apps.content.selectors import deck_cards_list, deck_get
from apps.srs.models import DeckPass


class PassInvalid(DomainError):
    code = "invalid"


@dataclass(frozen=True)
class PassInput:
    known: int
    total: int
    started_at: datetime
    finished_at: datetime
    client_pass_id: uuid.UUID


def _errors(*, deck: Deck, data: PassInput, now: datetime) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    if data.total < 1:
        errors["total"] = [f"A pass covers at least one card, got {data.total}."]
    else:
        active = deck_cards_list(deck=deck).count()
        if data.total > active:
            errors["total"] = [f"Deck {deck.slug} has {active} cards, fewer than the {data.total} sent."]
    if data.known < 0:
        errors["known"] = [f"known cannot be negative, got {data.known}."]
    elif data.known > data.total:
        errors["known"] = [f"known ({data.known}) cannot exceed total ({data.total})."]
    if data.finished_at < data.started_at:
        errors["finished_at"] = [
            f"{data.finished_at.isoformat()} is before started_at ({data.started_at.isoformat()})."
        ]
    elif data.finished_at > latest_client_time(now=now):
        errors["finished_at"] = [f"{data.finished_at.isoformat()} is in the future (server time {now.isoformat()})."]
    return errors


def _same_pass(seen: DeckPass, *, deck_slug: str, data: PassInput) -> DeckPass:
    """The saved pass, if `data` is that pass sent again; a different pass under its client id is refused.

    Times compare as instants, whatever offset they were sent with.
    """
    differ = [
        name
        for name, sent, kept in (
            ("deck", deck_slug, seen.deck.slug),
            ("known", data.known, seen.known),
            ("total", data.total, seen.total),
            ("started_at", data.started_at, seen.started_at),
            ("finished_at", data.finished_at, seen.finished_at),
        )
        if sent != kept
    ]
    if differ:
        raise IdempotencyKeyReused(
            f"client_pass_id {data.client_pass_id} is already saved for a different pass (it differs in "
            f"{', '.join(differ)}); nothing was saved. Send a new pass with a new client_pass_id.",
            fields={"client_pass_id": [f"Already used for pass {seen.pk}, of deck {seen.deck.slug}."]},
        )
    return seen


def deck_pass_record(*, learner: Any, deck_slug: str, data: PassInput, now: datetime) -> tuple[DeckPass, bool]:
    """Save a finished pass; the same pass sent again returns the first one, unchanged.

    Returns the pass and whether it was created now. A pass already saved is found before the deck is
    looked up, so a client retrying after its deck was archived still gets its answer. A different
    pass under a client_pass_id already saved is refused with IdempotencyKeyReused.
    """
    seen = DeckPass.objects.select_related("deck").filter(learner=learner, client_pass_id=data.client_pass_id).first()
    if seen is not None:
        return _same_pass(seen, deck_slug=deck_slug, data=data), False
    deck = deck_get(slug=deck_slug)
    errors = _errors(deck=deck, data=data, now=now)
    if errors:
        raise PassInvalid(
            "The pass is invalid; nothing was saved: "
            + "; ".join(f"{name}: {' '.join(messages)}" for name, messages in errors.items()),
            fields=errors,
        )
    try:
        with transaction.atomic():
            created = DeckPass.objects.create(
                learner=learner,
                deck=deck,
                client_pass_id=data.client_pass_id,
                known=data.known,
                total=data.total,
                started_at=data.started_at,
                finished_at=data.finished_at,
            )
    except IntegrityError:
        # The same client id sent twice at once: the other request saved it first.
        seen = DeckPass.objects.select_related("deck").get(learner=learner, client_pass_id=data.client_pass_id)
        return _same_pass(seen, deck_slug=deck_slug, data=data), False
    return created, True


def deck_passes_list(*, learner: Any, deck_slug: str | None = None) -> QuerySet[DeckPass]:
    """The learner's passes, newest first; with deck_slug, only that deck's (none for a slug no deck has)."""
    passes = DeckPass.objects.filter(learner=learner).select_related("deck")
    if deck_slug is not None:
        passes = passes.filter(deck__slug=deck_slug)
    return passes.order_by("-finished_at", "-pk")


def deck_pass_best_list(*, learner: Any) -> list[DeckPass]:
    """Each deck's best pass: highest known/total, then the shortest, then the earliest; in one query.

    Each pass carries `passes_count`, the learner's number of passes of that deck.
    """
    # known/total in floating point: equal fractions such as 1/2 and 2/4 divide to the same double.
    score = Cast("known", FloatField()) / Cast("total", FloatField())
    duration = ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField())
    ranked = (
        DeckPass.objects.filter(learner=learner)
        .select_related("deck")
        .annotate(
            rank=Window(
                RowNumber(),
                partition_by=[F("deck_id")],
                order_by=[score.desc(), duration.asc(), F("finished_at").asc(), F("pk").asc()],
            ),
            passes_count=Window(Count("pk"), partition_by=[F("deck_id")]),
        )
        .filter(rank=1)
        .order_by("deck__title", "deck_id")
    )
    return list(ranked)
