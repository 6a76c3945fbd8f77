"""Offline sync that scales with what changed: tail replays equal full replays, fixed query counts, bounded waits."""

from __future__ import annotations

import importlib
import random
import threading
import time
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.apps import apps as django_apps
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext, override_settings
from drf_spectacular.generators import SchemaGenerator

from apps.content.models import Card
from apps.srs.core.load_balancing import interval_span
from apps.srs.core.scheduling import MemoryState, Rating, ReviewEvent, replay
from apps.srs.models import CardMemory, ReviewKind, ReviewLog
from apps.srs.reviews.memory import memory_state_of
from apps.srs.reviews.services import ReviewInput, review_submit, review_undo, reviews_submit
from apps.srs.settings.config import scheduler_config_from_json
from apps.srs.settings.services import scheduling_settings_update
from tests.support.api import client_with_token, learner_with_token
from tests.support.reviews import JOIN_TIMEOUT_S, load_balancing_off

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def _event(log: ReviewLog) -> ReviewEvent:
    assert log.rating is not None and log.profile is not None
    config = scheduler_config_from_json(log.profile.config)
    return ReviewEvent(log.reviewed_at, str(log.client_review_id), Rating(log.rating), config)


def _replayed(learner: Any, card_id: int) -> list[tuple[ReviewLog, MemoryState]]:
    """Every standing review of the card with the state a replay of the whole history gives after it."""
    logs = list(
        ReviewLog.objects.filter(learner=learner, card_id=card_id, kind=ReviewKind.REVIEW, undone_by__isnull=True)
        .select_related("profile")
        .order_by("reviewed_at", "client_review_id")
    )
    states = replay([_event(log) for log in logs], learner_id=learner.pk, card_id=card_id)
    assert [log.reviewed_at for log in logs] == [state.last_review for state in states]
    return list(zip(logs, states, strict=True))


def _stands_for(stored: MemoryState | None, replayed: MemoryState | None, log: ReviewLog) -> bool:
    """Whether a stored state is the replayed one, or is it with a due date load balancing moved within fuzz's range.

    A review applied in order has its due date balanced on the learner's due counts at the time,
    which a replay from scratch cannot know; a replay itself never balances.
    """
    if stored is None or replayed is None or stored == replayed:
        return stored == replayed
    assert log.profile is not None
    span = interval_span(
        replayed, reviewed_at=replayed.last_review, config=scheduler_config_from_json(log.profile.config)
    )
    interval = stored.due - stored.last_review
    return (
        span is not None
        and replace(stored, due=replayed.due) == replayed
        and interval % timedelta(days=1) == timedelta(0)
        and span[0] <= interval.days <= span[1]
    )


def _stored_state(data: dict[str, Any] | None) -> MemoryState | None:
    return MemoryState.from_dict(data) if data is not None else None


def assert_consistent(learner: Any, card_ids: list[int]) -> int:
    """Each card's memory and standing reviews' stored states are what a full replay gives; returns reviews seen."""
    seen = 0
    for card_id in card_ids:
        history = _replayed(learner, card_id)
        memory = CardMemory.objects.filter(learner=learner, card_id=card_id).first()
        if not history:
            assert memory is None, card_id
            continue
        assert memory is not None, card_id
        assert _stands_for(memory_state_of(memory), history[-1][1], history[-1][0]), card_id
        assert memory.first_review == history[0][0].reviewed_at, card_id
        before: MemoryState | None = None
        previous: ReviewLog | None = None
        for log, after in history:
            assert (before is None) == (log.state_before is None), (card_id, log.pk)
            if previous is not None:
                assert _stands_for(_stored_state(log.state_before), before, previous), (card_id, log.pk)
                # A review starts from the state the one before it left, balanced or not.
                assert log.state_before == previous.state_after, (card_id, log.pk)
            assert _stands_for(_stored_state(log.state_after), after, log), (card_id, log.pk)
            before, previous = after, log
        seen += len(history)
    return seen


def _review(card_id: int, at: datetime, rating: int) -> ReviewInput:
    return ReviewInput(card_id=card_id, rating=rating, client_review_id=uuid.uuid4(), reviewed_at=at)


def _latest_standing(learner: Any, card_id: int) -> ReviewLog | None:
    return (
        ReviewLog.objects.filter(learner=learner, card_id=card_id, kind=ReviewKind.REVIEW, undone_by__isnull=True)
        .order_by("-reviewed_at", "-client_review_id")
        .first()
    )


# --- a tail replay is a full replay ------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("seed", [1, 2])
def test_replaying_from_the_earliest_late_review_equals_replaying_everything(deck_cards, seed):
    rng = random.Random(seed)  # noqa: S311
    learner = get_user_model().objects.create_user(username=f"sync-{seed}", password="a long enough passphrase")
    card_ids = [card.pk for card in deck_cards[:5]]
    # Six-hour slots over two months: late arrivals everywhere, and now and then two reviews at one instant.
    slots = [NOW - timedelta(days=60) + timedelta(hours=6 * n) for n in range(240)]
    sent: list[ReviewInput] = []
    replays = undos = 0
    for round_ in range(30):
        step = rng.random()
        if round_ in (10, 20):
            # Reviews keep the settings they were made with: a replay mixes several profiles.
            retention = 0.8 if round_ == 10 else 0.95
            scheduling_settings_update(learner=learner, changes={"desired_retention": retention})
            learner = get_user_model().objects.get(pk=learner.pk)
        elif step < 0.6:
            reviews = [
                _review(rng.choice(card_ids), rng.choice(slots), rng.randint(1, 4)) for _ in range(rng.randint(1, 12))
            ]
            resent = rng.sample(sent, min(len(sent), rng.randint(0, 2)))
            outcomes = reviews_submit(learner=learner, reviews=reviews + resent, now=NOW)
            assert [outcome.created for outcome in outcomes] == [True] * len(reviews) + [False] * len(resent)
            replays += sum(outcome.replayed for outcome in outcomes)
            sent += reviews
        elif step < 0.75:
            single = _review(rng.choice(card_ids), rng.choice(slots), rng.randint(1, 4))
            replays += review_submit(learner=learner, review=single, now=NOW).replayed
            sent.append(single)
        else:
            latest = _latest_standing(learner, rng.choice(card_ids))
            if latest is not None:
                review_undo(learner=learner, review_id=latest.pk, now=NOW)
                undos += 1
        assert_consistent(learner, card_ids)
    assert replays >= 10 and undos >= 2, (replays, undos)
    assert ReviewLog.objects.filter(learner=learner, kind=ReviewKind.REVIEW).values("profile").distinct().count() == 3


@pytest.mark.django_db
def test_a_late_review_answers_with_the_cards_memory_and_an_in_order_one_with_its_own_state(learner, deck_cards):
    card = deck_cards[0].pk
    first, latest = _review(card, NOW - timedelta(days=30), 3), _review(card, NOW - timedelta(days=5), 3)
    reviews_submit(learner=learner, reviews=[first, latest], now=NOW)
    late, later = _review(card, NOW - timedelta(days=20), 1), _review(card, NOW - timedelta(days=1), 2)

    late_outcome, later_outcome = reviews_submit(learner=learner, reviews=[late, later], now=NOW)

    history = _replayed(learner, card)
    assert (late_outcome.replayed, later_outcome.replayed) == (True, False)
    assert late_outcome.state == history[-1][1]
    assert later_outcome.state == history[-1][1]
    assert [log.client_review_id for log, _ in history] == [r.client_review_id for r in (first, late, latest, later)]
    assert_consistent(learner, [card])


# --- the work grows with the batch, not with the history --------------------------------------------------------


def _learner_with_history(username: str, cards: list[Card], reviews: int) -> Any:
    """A learner whose `reviews` reviews end at the same times, on the same cards, whatever their number."""
    learner = get_user_model().objects.create_user(username=username, password="a long enough passphrase")
    end = NOW - timedelta(hours=1)
    history = [
        _review(cards[index % len(cards)].pk, end - timedelta(hours=6 * (reviews - 1 - index)), 1 + index % 4)
        for index in range(reviews)
    ]
    reviews_submit(learner=learner, reviews=history, now=NOW)
    return get_user_model().objects.get(pk=learner.pk)


def _late_batch(cards: list[Card]) -> list[ReviewInput]:
    """Two reviews per card from the last days of the history, each older than every card's last review."""
    end = NOW - timedelta(hours=1)
    return [
        _review(card.pk, end - timedelta(hours=6 * (len(cards) + 2 + n) + 1), 2 + n) for card in cards for n in range(2)
    ]


def _review_log_rows_read() -> int:
    """Rows of the review log PostgreSQL has read in this transaction so far."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) FROM pg_stat_xact_user_tables "
            "WHERE relname = %s",
            [ReviewLog._meta.db_table],
        )
        row = cursor.fetchone()
    return int(row[0]) if row else 0


@pytest.mark.django_db
def test_queries_per_late_batch_do_not_grow_with_the_history(deck_cards):
    cards = deck_cards[:10]
    learners = {reviews: _learner_with_history(f"history-{reviews}", cards, reviews) for reviews in (50, 500)}
    with connection.cursor() as cursor:
        # On a table this small the planner may read it whole, or hash it whole for a join; at
        # scale it looks rows up by index, as it is made to here.
        cursor.execute(f"ANALYZE {ReviewLog._meta.db_table}")
        cursor.execute(
            "SET LOCAL enable_seqscan = off; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off"
        )
    counts, rows = [], []
    for reviews, learner in learners.items():
        read_before = _review_log_rows_read()
        with CaptureQueriesContext(connection) as captured:
            outcomes = reviews_submit(learner=learner, reviews=_late_batch(cards), now=NOW)
        read_after = _review_log_rows_read()
        assert all(outcome.replayed for outcome in outcomes)
        statements = [q["sql"] for q in captured.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]
        counts.append(len(statements))
        rows.append(read_after - read_before)
        assert ReviewLog.objects.filter(learner=learner).count() == reviews + 2 * len(cards)
        assert_consistent(learner, [card.pk for card in cards])
    # Cards visible, the learner's turn, settings, memories, tails, new logs, rewritten
    # states, memories again: one statement each, however long the history.
    assert counts[0] == counts[1], counts
    assert counts[1] <= 9, counts
    # The rows read are each card's tail, the review before it and the ones rewritten, not its history.
    assert rows[0] == rows[1], rows
    assert rows[1] < 100, rows


@pytest.mark.django_db
def test_the_tail_is_read_through_the_card_time_index(deck_cards):
    cards = deck_cards[:10]
    learner = _learner_with_history("explained", cards, 400)
    with CaptureQueriesContext(connection) as captured:
        reviews_submit(learner=learner, reviews=_late_batch(cards), now=NOW)
    (tail_sql,) = [q["sql"] for q in captured.captured_queries if "LATERAL" in q["sql"]]
    with connection.cursor() as cursor:
        # The plans of a table this small, and never analyzed, are not the ones it gets at scale.
        cursor.execute(f"ANALYZE {ReviewLog._meta.db_table}")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {tail_sql}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "review_log_card_time" in plan, plan


# --- bounded waiting ----------------------------------------------------------------------------------------------


def _hold(work: Any, holding: threading.Event, release: threading.Event, errors: list[BaseException]) -> None:
    """In its own transaction on its own connection: do `work`, then keep the transaction open until released."""
    try:
        with transaction.atomic():
            work()
            holding.set()
            release.wait(timeout=JOIN_TIMEOUT_S)
    except BaseException as error:  # reported by the test
        errors.append(error)
        holding.set()
    finally:
        connection.close()


# A wait for the learner's turn long enough that a refusal "at once" cannot be mistaken for one after it,
# however loaded the machine.
LONG_LOCK_WAIT_S = 10


def _refused_while_held(work: Any, send: Any) -> tuple[Any, float]:
    holding, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []
    holder = threading.Thread(target=_hold, args=(work, holding, release, errors))
    holder.start()
    try:
        assert holding.wait(timeout=JOIN_TIMEOUT_S)
        assert not errors, errors
        started = time.monotonic()
        response = send()
        waited = time.monotonic() - started
    finally:
        release.set()
        holder.join(timeout=JOIN_TIMEOUT_S)
    assert not holder.is_alive() and not errors, errors
    return response, waited


def _assert_sync_in_progress(response: Any, waited: float, *, at_once: bool = False) -> None:
    assert response.status_code == 409, response.content
    assert response.json()["error"]["code"] == "sync_in_progress"
    assert set(response.json()["error"]) == {"code", "message", "fields"}
    assert int(response["Retry-After"]) >= 1
    if at_once:
        # Refused before the learner's turn is waited for: the wait (long, here) was not taken.
        assert waited < LONG_LOCK_WAIT_S / 2, waited
    else:
        # The wait is one second: refused after it, long before a server would give up on the request.
        assert 0.9 <= waited < 8, waited


@pytest.mark.django_db(transaction=True)
@override_settings(REVIEW_SYNC_LOCK_WAIT_SECONDS=LONG_LOCK_WAIT_S)
def test_an_upload_while_another_holds_the_learners_turn_is_refused_at_once_and_writes_nothing(deck_cards):
    learner, token = learner_with_token("waiter")
    cards = [card.pk for card in deck_cards[:6]]
    reviews = [
        {
            "card": card,
            "rating": 3,
            "client_review_id": str(uuid.uuid4()),
            "reviewed_at": (NOW - timedelta(days=d)).isoformat(),
        }
        for card in cards
        for d in (9, 4)
    ]

    def another_upload() -> None:
        reviews_submit(learner=learner, reviews=[_review(card, NOW - timedelta(days=7), 2) for card in cards], now=NOW)

    def send() -> Any:
        return client_with_token(token).post("/api/v1/reviews/batch/", {"reviews": reviews}, format="json")

    response, waited = _refused_while_held(another_upload, send)

    _assert_sync_in_progress(response, waited, at_once=True)
    assert ReviewLog.objects.filter(learner=learner).count() == len(cards)
    assert not ReviewLog.objects.filter(client_review_id__in=[r["client_review_id"] for r in reviews]).exists()
    # Sent again once the other upload is in, it is recorded and merged with it.
    assert send().status_code == 200
    assert assert_consistent(learner, cards) == 3 * len(cards)


@pytest.mark.django_db(transaction=True)
@override_settings(REVIEW_SYNC_LOCK_WAIT_SECONDS=1)
def test_a_review_kept_waiting_for_a_row_lock_is_refused_the_same_way(deck_cards):
    learner, token = learner_with_token("row-waiter")
    card = deck_cards[0].pk
    review_submit(learner=learner, review=_review(card, NOW - timedelta(days=3), 3), now=NOW)
    body = {"card": card, "rating": 4, "client_review_id": str(uuid.uuid4())}

    def lock_the_memory_row() -> None:
        # As unsuspending a leech does: the row alone, without the learner's turn.
        list(CardMemory.objects.select_for_update().filter(learner=learner, card_id=card))

    response, waited = _refused_while_held(
        lock_the_memory_row, lambda: client_with_token(token).post("/api/v1/reviews/", body, format="json")
    )

    _assert_sync_in_progress(response, waited)
    assert ReviewLog.objects.filter(learner=learner).count() == 1
    assert client_with_token(token).post("/api/v1/reviews/", body, format="json").status_code == 201


def test_the_review_endpoints_document_the_refusal_and_its_retry_after():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    for path in ("/api/v1/reviews/", "/api/v1/reviews/batch/", "/api/v1/reviews/{review_id}/undo/"):
        conflict = schema["paths"][path]["post"]["responses"]["409"]
        assert "sync_in_progress" in conflict["description"]
        assert conflict["headers"]["Retry-After"]["required"] is False, path
    passes = schema["paths"]["/api/v1/decks/{slug}/passes/"]["post"]["responses"]["409"]
    assert "headers" not in passes


# --- the migration that makes stored states right -------------------------------------------------------------------

_migration = importlib.import_module("apps.srs.migrations.0003_review_log_states_replayed")


@pytest.mark.django_db
def test_the_migration_rewrites_the_states_a_late_review_left_stale(deck_cards):
    learner = get_user_model().objects.create_user(username="stale", password="a long enough passphrase")
    other = get_user_model().objects.create_user(username="fine", password="a long enough passphrase")
    cards = [card.pk for card in deck_cards[:3]]
    for who in (learner, other):
        # The repair replays with plain fuzz, as reviews were scheduled when it was written.
        load_balancing_off(who)
        reviews_submit(
            learner=who,
            reviews=[
                _review(card, NOW - timedelta(days=40 - 5 * n), 1 + (n + card) % 4) for card in cards for n in range(6)
            ],
            now=NOW,
        )
    undone = _latest_standing(learner, cards[2])
    assert undone is not None
    review_undo(learner=learner, review_id=undone.pk, now=NOW)
    # As merging used to leave a card: a late review stored with the card's latest state before and
    # after it, and the reviews after it with the states of a history without it.
    history = _replayed(learner, cards[0])
    late = history[2][0]
    without = replay(
        [_event(log) for log, _ in history if log is not late],
        learner_id=learner.pk,
        card_id=cards[0],
    )
    ReviewLog.objects.filter(pk=late.pk).update(
        state_before=without[-1].to_dict(), state_after=history[-1][1].to_dict()
    )
    for (log, _), before, after in zip(history[3:], without[1:], without[2:], strict=False):
        ReviewLog.objects.filter(pk=log.pk).update(state_before=before.to_dict(), state_after=after.to_dict())
    # And a row left without its state after.
    ReviewLog.objects.filter(pk=history[0][0].pk).update(state_after=None)
    untouched = {
        row["pk"]: row
        for row in ReviewLog.objects.filter(
            pk__in=[undone.pk, *[log.pk for log, _ in _replayed(other, cards[0])]]
        ).values("pk", "state_before", "state_after")
    }
    stale = 2 + len(history[3:])

    assert _migration.review_log_states_rewrite(django_apps) == stale

    for who in (learner, other):
        assert_consistent(who, cards)
    # Undone reviews and rows that were right are left as they were.
    for pk, row in untouched.items():
        assert ReviewLog.objects.filter(pk=pk).values("pk", "state_before", "state_after").get() == row
    assert _migration.review_log_states_rewrite(django_apps) == 0


@pytest.mark.django_db
def test_the_migration_reads_every_history_in_rounds(deck_cards, monkeypatch):
    monkeypatch.setattr(_migration, "HISTORIES_PER_ROUND", 2)
    learners = [
        get_user_model().objects.create_user(username=f"round-{n}", password="a long enough passphrase")
        for n in range(3)
    ]
    cards = [card.pk for card in deck_cards[:3]]
    for who in learners:
        reviews_submit(
            learner=who,
            reviews=[_review(card, NOW - timedelta(days=9 - n), 3) for card in cards for n in range(2)],
            now=NOW,
        )
    ReviewLog.objects.update(state_after=None)

    assert _migration.review_log_states_rewrite(django_apps) == ReviewLog.objects.count() == 18
    for who in learners:
        assert_consistent(who, cards)
