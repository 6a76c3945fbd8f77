"""Playing Match the Pairs: starting a board from the learner's weakest cards, and judging attempts.

The server decides everything that counts: which cards, what pairs with what, the clock, the
penalty and the score. The client only ever sees random per-board ids until a pair is earned.
"""

from __future__ import annotations

import copy
import secrets
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Count, Min, Q, Sum

from apps.common.errors import Conflict, DomainError, IdempotencyKeyReused
from apps.content.models import Card, Deck
from apps.content.selectors import deck_cards_list, deck_get, visible_card_ids
from apps.games.conf import match_settings
from apps.games.models import MAX_PAIRS, MIN_PAIRS, MatchAttempt, MatchBoard, MatchItem
from apps.games.selectors import BoardNotFound
from apps.srs.core.population import CardConfigs
from apps.srs.core.scheduling import MemoryStage, SchedulerConfig, retrievability
from apps.srs.models import CardMemory, ReviewLog, ReviewSource
from apps.srs.reviews.memory import memory_state_of
from apps.srs.reviews.services import ReviewInput, reviews_submit
from apps.srs.settings.memory_models import card_configs_get

# Fixed forever: a match review's client id is uuid5 of this and "match:{board}:{card}", so a
# retried request can never review the same card of the same board twice.
MATCH_REVIEW_NAMESPACE = uuid.UUID("6d1c7f0e-3a7b-5c2e-9f41-8b2d0c5e7a93")
# 12 random bytes: 96 bits per id, far beyond guessing, and short enough to send back and forth.
_ITEM_ID_BYTES = 12

_random = secrets.SystemRandom()


class BoardFinished(Conflict):
    code = "board_finished"


class BoardExpired(Conflict):
    code = "board_expired"


class AlreadyMatched(Conflict):
    code = "already_matched"


class MatchInvalid(DomainError):
    code = "invalid"


class DeckTooSmall(DomainError):
    code = "deck_too_small"


@dataclass(frozen=True)
class AttemptOutcome:
    board: MatchBoard
    attempt: MatchAttempt
    # The pair earned by a correct attempt; None after a wrong one.
    item: MatchItem | None
    # The card review this call recorded; None after a wrong attempt and for a replay.
    review: ReviewLog | None
    # False when the client_attempt_id was already recorded: `board` is then the board as that
    # attempt left it, not as it is now, so a retry reads exactly what the first answer said.
    created: bool = True


def match_review_id(*, board_id: uuid.UUID, card_id: int) -> uuid.UUID:
    return uuid.uuid5(MATCH_REVIEW_NAMESPACE, f"match:{board_id}:{card_id}")


# --- Choosing the cards --------------------------------------------------------------------------


def _is_weak(memory: CardMemory, *, strength: float, config: SchedulerConfig) -> bool:
    return (
        memory.lapses > 0
        or memory.stage != MemoryStage.REVIEW
        or memory.is_leech
        or strength < config.desired_retention
    )


def match_cards_pick(
    *,
    cards: Sequence[Card],
    memories: Iterable[CardMemory],
    count: int,
    now: datetime,
    configs: CardConfigs,
) -> list[Card]:
    """The cards of a board: what the learner most needs, then what they have not seen.

    In order of priority:
      1. due cards (due now or earlier), lowest retrievability first;
      2. weak reviewed cards, not yet due: lapsed at least once, still in (re)learning, leeches, or
         below the learner's desired retention; lowest retrievability first;
      3. new cards (never reviewed), at random;
      4. the rest (reviewed cards the learner knows well), at random.
    Retrievability is `apps.srs.core.scheduling.retrievability` under the config of the learner's card;
    in 1 and 2 equal retrievability puts more lapses first. Equal keys are ordered at random. A card
    whose term or definition reads exactly like one already chosen is skipped, since two identical
    texts would make a pair ambiguous.
    """
    by_card = {memory.card_id: memory for memory in memories}
    ranked: list[tuple[tuple[float, ...], Card]] = []
    for card in cards:
        memory = by_card.get(card.pk)
        tie_break = _random.random()
        if memory is None:
            ranked.append(((3, tie_break), card))
            continue
        config = configs.of(card.pk)
        strength = retrievability(memory_state_of(memory), now=now, config=config)
        if memory.due <= now:
            ranked.append(((1, strength, -memory.lapses, tie_break), card))
        elif _is_weak(memory, strength=strength, config=config):
            ranked.append(((2, strength, -memory.lapses, tie_break), card))
        else:
            ranked.append(((4, tie_break), card))
    ranked.sort(key=lambda entry: entry[0])

    chosen: list[Card] = []
    terms: set[str] = set()
    definitions: set[str] = set()
    for _, card in ranked:
        term, definition = card.term.strip().casefold(), card.definition.strip().casefold()
        if term in terms or definition in definitions:
            continue
        terms.add(term)
        definitions.add(definition)
        chosen.append(card)
        if len(chosen) == count:
            break
    return chosen


def _random_ids(count: int) -> list[str]:
    ids: set[str] = set()
    while len(ids) < count:
        ids.add(secrets.token_urlsafe(_ITEM_ID_BYTES))
    result = list(ids)
    _random.shuffle(result)
    return result


def board_start(*, learner: Any, deck_slug: str, pairs: int, now: datetime) -> MatchBoard:
    """Start a board of `pairs` pairs from the deck's visible cards (see match_cards_pick)."""
    if not MIN_PAIRS <= pairs <= MAX_PAIRS:
        raise MatchInvalid(
            f"pairs must be from {MIN_PAIRS} to {MAX_PAIRS}.",
            fields={"pairs": [f"Expected {MIN_PAIRS}-{MAX_PAIRS}, got {pairs}."]},
        )
    deck: Deck = deck_get(slug=deck_slug)
    cards = list(deck_cards_list(deck=deck))
    if len(cards) < MIN_PAIRS:
        raise DeckTooSmall(f"Deck {deck.slug} has {len(cards)} card(s); a board needs at least {MIN_PAIRS}.")
    if pairs > len(cards):
        raise MatchInvalid(
            f"Deck {deck.slug} has {len(cards)} cards, fewer than the {pairs} pairs asked for.",
            fields={"pairs": [f"At most {len(cards)} for this deck, got {pairs}."]},
        )
    configs = card_configs_get(learner=learner)
    memories = CardMemory.objects.filter(learner=learner, card__in=[card.pk for card in cards])
    chosen = match_cards_pick(cards=cards, memories=memories, count=pairs, now=now, configs=configs)
    if len(chosen) < pairs:
        raise MatchInvalid(
            f"Deck {deck.slug} has only {len(chosen)} pairs that read differently from each other.",
            fields={"pairs": [f"At most {len(chosen)} for this deck, got {pairs}."]},
        )

    rules = match_settings()
    term_positions = list(range(pairs))
    definition_positions = list(range(pairs))
    # Two independent shuffles, and two independent sets of ids: nothing lines a term up with its definition.
    _random.shuffle(term_positions)
    _random.shuffle(definition_positions)
    term_ids, definition_ids = _random_ids(pairs), _random_ids(pairs)
    with transaction.atomic():
        board = MatchBoard.objects.create(
            learner=learner,
            deck=deck,
            pairs=pairs,
            started_at=now,
            expires_at=now + rules.expiry,
            penalty_per_wrong_ms=rules.penalty_ms,
        )
        MatchItem.objects.bulk_create(
            MatchItem(
                board=board,
                card=card,
                term_id=term_ids[index],
                definition_id=definition_ids[index],
                term_position=term_positions[index],
                definition_position=definition_positions[index],
            )
            for index, card in enumerate(chosen)
        )
    return board


# --- Attempts ------------------------------------------------------------------------------------


def _finish(board: MatchBoard, *, now: datetime) -> None:
    """Score the board: the server's elapsed time plus the penalties, in milliseconds."""
    board.finished_at = now
    board.elapsed_ms = max(0, (now - board.started_at) // timedelta(milliseconds=1))
    board.score_ms = board.elapsed_ms + board.penalty_ms
    # Two boards of one learner finishing at once are compared one after the other, so only one of
    # them can claim a personal best over the other.
    list(get_user_model().objects.select_for_update().filter(pk=board.learner_id).values_list("pk"))
    previous = (
        MatchBoard.objects.filter(
            learner_id=board.learner_id, deck_id=board.deck_id, pairs=board.pairs, finished_at__isnull=False
        )
        .exclude(pk=board.pk)
        .aggregate(best=Min("score_ms"))["best"]
    )
    board.personal_best = previous is None or board.score_ms < previous


def _review_matched(*, learner: Any, board: MatchBoard, item: MatchItem, now: datetime) -> ReviewLog | None:
    """The card's one review from this board: Good at the first try, Again after any mistake (by default).

    A card archived since the board started can no longer be reviewed: the match still counts.
    """
    if not visible_card_ids(card_ids=[item.card_id]):
        return None
    rules = match_settings()
    (outcome,) = reviews_submit(
        learner=learner,
        reviews=[
            ReviewInput(
                card_id=item.card_id,
                rating=int(rules.rating_after_mistake if item.missed else rules.rating_first_try),
                client_review_id=match_review_id(board_id=board.pk, card_id=item.card_id),
                reviewed_at=now,
                source=ReviewSource.MATCH,
            )
        ],
        now=now,
    )
    return outcome.log


def attempt_make(
    *,
    learner: Any,
    board_id: uuid.UUID,
    term_id: str,
    definition_id: str,
    now: datetime,
    client_attempt_id: uuid.UUID | None = None,
) -> AttemptOutcome:
    """Judge one attempt to pair a term with a definition, and record it with its consequences.

    The board row is locked for the whole attempt, so concurrent attempts on one board are judged
    one after the other: an item can be matched once only, and counts and penalties never go lost.
    Refused attempts (4xx) change nothing and leave no row.

    A client_attempt_id already recorded with the same board and ids records nothing and answers
    the first attempt's outcome, even once the board has finished or expired; with anything else it
    is refused (IdempotencyKeyReused). The unique (learner, client_attempt_id) constraint settles
    two requests racing with one id on different boards, which the board lock cannot.
    """
    try:
        with transaction.atomic():
            return _attempt_record(
                learner=learner,
                board_id=board_id,
                term_id=term_id,
                definition_id=definition_id,
                now=now,
                client_attempt_id=client_attempt_id,
            )
    except IntegrityError:
        seen = _attempt_by_client_id(learner=learner, client_attempt_id=client_attempt_id)
        if seen is None:
            raise
        return _attempt_replay(seen, board_id=board_id, term_id=term_id, definition_id=definition_id)


def _attempt_record(
    *,
    learner: Any,
    board_id: uuid.UUID,
    term_id: str,
    definition_id: str,
    now: datetime,
    client_attempt_id: uuid.UUID | None,
) -> AttemptOutcome:
    board = MatchBoard.objects.select_for_update().filter(pk=board_id, learner=learner).first()
    if board is None:
        raise BoardNotFound()
    # Looked up under the board's lock: a retry racing its first request waits for it, then finds it.
    seen = _attempt_by_client_id(learner=learner, client_attempt_id=client_attempt_id)
    if seen is not None:
        return _attempt_replay(seen, board_id=board_id, term_id=term_id, definition_id=definition_id)
    if board.finished_at is not None:
        raise BoardFinished("This board is finished; start a new one to play again.")
    if now >= board.expires_at:
        raise BoardExpired("This board expired unfinished; start a new one to play again.")
    items = list(board.items.select_related("card"))
    term_item = next((item for item in items if item.term_id == term_id), None)
    definition_item = next((item for item in items if item.definition_id == definition_id), None)
    errors: dict[str, list[str]] = {}
    if term_item is None:
        errors["term_id"] = ["No such term on this board."]
    if definition_item is None:
        errors["definition_id"] = ["No such definition on this board."]
    if errors or term_item is None or definition_item is None:
        raise MatchInvalid("Unknown ids; nothing was recorded.", fields=errors)
    matched = {
        name: ["Already matched."]
        for name, item in (("term_id", term_item), ("definition_id", definition_item))
        if item.matched_at is not None
    }
    if matched:
        raise AlreadyMatched("Already matched; nothing was recorded.", fields=matched)

    correct = term_item.pk == definition_item.pk
    review: ReviewLog | None = None
    if correct:
        term_item.matched_at = now
        term_item.save(update_fields=["matched_at"])
        board.matched += 1
        # Recorded in this transaction: the match and its review stand or fall together.
        review = _review_matched(learner=learner, board=board, item=term_item, now=now)
        if board.matched == board.pairs:
            _finish(board, now=now)
    else:
        for item in (term_item, definition_item):
            if not item.missed:
                item.missed = True
                item.save(update_fields=["missed"])
        board.wrong_attempts += 1
        board.penalty_ms += board.penalty_per_wrong_ms
    attempt = MatchAttempt.objects.create(
        board=board,
        learner_id=board.learner_id,
        client_attempt_id=client_attempt_id,
        term_item=term_item,
        definition_item=definition_item,
        correct=correct,
        attempted_at=now,
        penalty_ms=0 if correct else board.penalty_per_wrong_ms,
    )
    board.save()
    return AttemptOutcome(board=board, attempt=attempt, item=term_item if correct else None, review=review)


def _attempt_by_client_id(*, learner: Any, client_attempt_id: uuid.UUID | None) -> MatchAttempt | None:
    if client_attempt_id is None:
        return None
    return (
        MatchAttempt.objects.select_related("board", "term_item__card", "definition_item")
        .filter(learner=learner, client_attempt_id=client_attempt_id)
        .first()
    )


def _attempt_replay(seen: MatchAttempt, *, board_id: uuid.UUID, term_id: str, definition_id: str) -> AttemptOutcome:
    """The recorded attempt's outcome as it was answered, or IdempotencyKeyReused if this request differs."""
    differs = [
        name
        for name, first, now_sent in (
            ("board_id", str(seen.board_id), str(board_id)),
            ("term_id", seen.term_item.term_id, term_id),
            ("definition_id", seen.definition_item.definition_id, definition_id),
        )
        if first != now_sent
    ]
    if differs:
        raise IdempotencyKeyReused(
            f"client_attempt_id {seen.client_attempt_id} was already used for an attempt with another "
            f"{', '.join(differs)}; nothing was recorded. Send a new id for a new attempt.",
            fields={name: ["Differs from the attempt first sent with this client_attempt_id."] for name in differs},
        )
    return AttemptOutcome(
        board=_board_after(seen),
        attempt=seen,
        item=seen.term_item if seen.correct else None,
        review=None,
        created=False,
    )


def _board_after(attempt: MatchAttempt) -> MatchBoard:
    """The board as `attempt` left it: attempts are append-only and numbered in the order they were
    judged, so the counts are those of the attempts up to it. Unsaved; only for reading."""
    board = attempt.board
    totals = MatchAttempt.objects.filter(board_id=board.pk, pk__lte=attempt.pk).aggregate(
        matched=Count("pk", filter=Q(correct=True)),
        wrong=Count("pk", filter=Q(correct=False)),
        penalty=Sum("penalty_ms"),
    )
    then = copy.copy(board)
    then.matched = totals["matched"]
    then.wrong_attempts = totals["wrong"]
    then.penalty_ms = totals["penalty"] or 0
    if then.matched < board.pairs:
        # Only the last match finishes a board; every attempt before it saw the board unfinished.
        then.finished_at = then.elapsed_ms = then.score_ms = None
        then.personal_best = False
    return then
