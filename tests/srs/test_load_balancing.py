"""Load balancing: the emptiest day fuzz allows, easy days, previews equal to outcomes, replays untouched, settings."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from typing import Any

import fsrs
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.content.models import Card
from apps.srs.core.load_balancing import (
    DueLoad,
    due_balanced,
    interval_balanced,
)
from apps.srs.core.scheduling import (
    MemoryStage,
    MemoryState,
    Rating,
    ReviewEvent,
    SchedulerConfig,
    card_fuzz_seed,
    fuzz_range,
    learner_day,
    replay,
    review,
)
from apps.srs.models import CardMemory, ReviewLog, SchedulingSettings
from apps.srs.reviews.due_load import due_load_get
from apps.srs.settings.rules import SettingsInvalid, scheduling_settings_errors, scheduling_settings_values
from apps.srs.settings.services import scheduling_settings_update
from tests.support.due_load_reference import due_counts_read_here, reviewed_since_read_here
from tests.support.reviews import DECK, post_review, review_body, without_recall_time

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)  # a Monday
CONFIG = SchedulerConfig()
SETTINGS_URL = "/api/v1/srs/settings/"
STUDY = f"/api/v1/decks/{DECK}/study/"
DAY = timedelta(days=1)


def _day(interval: int) -> date:
    return (START + interval * DAY).date()


def _by_interval(counts: dict[int, int]) -> DueLoad:
    return DueLoad(due_counts={_day(interval): count for interval, count in counts.items()})


def _pick(load: DueLoad, *, low: int = 8, high: int = 12, drawn: int = 10) -> int:
    return interval_balanced(low=low, high=high, drawn=drawn, day_of=_day, load=load)


def _in_review(stability: float, *, at: datetime = START) -> MemoryState:
    return MemoryState(
        stage=MemoryStage.REVIEW,
        step=None,
        stability=stability,
        difficulty=5.0,
        due=at,
        last_review=at - 10 * DAY,
        reps=4,
        lapses=0,
    )


# --- the pure pick ------------------------------------------------------------------------------------------------


def test_the_fuzz_range_is_fsrs_own():
    # 10 days: one day plus 15% of 2.5..7 and 10% of 7..10 each side.
    assert fuzz_range(10, maximum_interval=36_500) == (8, 12)
    assert fuzz_range(100, maximum_interval=36_500) == (93, 107)
    assert fuzz_range(100, maximum_interval=101) == (93, 101)
    assert fuzz_range(2, maximum_interval=36_500) is None
    scheduler = fsrs.Scheduler()
    rng = random.Random(7)  # noqa: S311 - test intervals, not security
    for _ in range(300):
        interval = rng.randint(3, 400)
        low, high = fuzz_range(interval, maximum_interval=36_500) or (0, 0)
        fuzzed = scheduler._get_fuzzed_interval(interval=timedelta(days=interval)).days
        # fsrs rounds a draw over [low, high + 1): its last day can come out one past its range.
        assert low <= fuzzed <= high + 1


def test_picks_the_emptiest_day_in_the_range():
    assert _pick(_by_interval({8: 3, 9: 2, 10: 5, 11: 1, 12: 4})) == 11


def test_days_outside_the_range_are_never_picked():
    load = _by_interval({7: 0, 8: 3, 9: 2, 10: 5, 11: 1, 12: 4, 13: 0} | dict.fromkeys(range(14, 30), 9))
    assert _pick(load) == 11
    assert _pick(_by_interval(dict.fromkeys(range(8, 13), 5) | {13: 0, 7: 0})) == 10


def test_an_even_load_keeps_the_day_fuzz_drew():
    assert _pick(DueLoad(due_counts={})) == 10
    assert _pick(_by_interval(dict.fromkeys(range(8, 13), 4))) == 10
    assert _pick(DueLoad(due_counts={}), drawn=13) == 13


def test_ties_go_to_the_day_nearest_the_draw_then_the_earlier():
    assert _pick(_by_interval({8: 1, 9: 3, 10: 5, 11: 1, 12: 1})) == 11
    assert _pick(_by_interval({8: 1, 9: 1, 10: 5, 11: 1, 12: 3})) == 9
    assert _pick(_by_interval({8: 0, 9: 5, 10: 5, 11: 5, 12: 0})) == 8


def test_the_pick_is_a_pure_function_of_its_inputs():
    load = _by_interval({8: 2, 9: 2, 10: 5, 11: 1, 12: 1})
    assert len({_pick(load) for _ in range(20)}) == 1
    assert load.due_counts == _by_interval({8: 2, 9: 2, 10: 5, 11: 1, 12: 1}).due_counts


def test_easy_days_scale_the_load():
    # START + 12 days is a Saturday, + 11 a Friday.
    assert _day(12).weekday() == 5
    saturday_half = {5: 0.5}
    # An empty half-share day weighs as much as a full day with one card due.
    even = _by_interval({8: 1, 9: 1, 10: 1, 11: 1})
    assert _pick(DueLoad(due_counts=even.due_counts, easy_days=saturday_half)) == 10
    assert _pick(DueLoad(due_counts=even.due_counts)) == 12
    busy = _by_interval(dict.fromkeys(range(8, 12), 2))
    assert _pick(DueLoad(due_counts=busy.due_counts, easy_days=saturday_half)) == 12
    # A day with no share is left alone even when empty, unless the range holds nothing else.
    assert _pick(DueLoad(due_counts=busy.due_counts, easy_days={5: 0.0})) == 10
    weekend = dict.fromkeys(range(7), 0.0)
    assert _pick(DueLoad(due_counts=busy.due_counts, easy_days=weekend)) == 12


def test_a_learners_day_follows_their_zone_and_day_start():
    late_evening = datetime(2026, 3, 2, 22, 30, tzinfo=UTC)
    assert learner_day(late_evening, timezone="UTC", day_start_hour=4) == date(2026, 3, 2)
    assert learner_day(late_evening, timezone="Asia/Tokyo", day_start_hour=4) == date(2026, 3, 3)
    assert learner_day(late_evening, timezone="Asia/Tokyo", day_start_hour=9) == date(2026, 3, 2)


def _good(state: MemoryState, *, seed: str = "s") -> MemoryState:
    return review(state, rating=Rating.GOOD, reviewed_at=START, config=CONFIG, fuzz_seed=seed)


def test_a_review_outcome_moves_to_the_emptiest_day():
    before = _in_review(20.0)
    after = _good(before)
    drawn = (after.due - START).days
    low, high = fuzz_range(CONFIG.scheduler()._next_interval(stability=after.stability), maximum_interval=36_500) or (
        0,
        0,
    )
    assert low < high
    empty = low if drawn != low else high
    load = _by_interval(dict.fromkeys(range(low, high + 2), 4) | {empty: 0})
    balanced = due_balanced(before, after, reviewed_at=START, config=CONFIG, load=load)
    assert balanced.due == START + empty * DAY
    assert balanced == MemoryState(**{**after.__dict__, "due": START + empty * DAY})


def test_with_no_load_every_outcome_is_fsrs_own():
    for stability in (3.0, 11.0, 40.0, 300.0):
        for seed in range(30):
            before = _in_review(stability)
            for rating in Rating:
                after = review(before, rating=rating, reviewed_at=START, config=CONFIG, fuzz_seed=str(seed))
                assert (
                    due_balanced(before, after, reviewed_at=START, config=CONFIG, load=DueLoad(due_counts={})) == after
                )


def test_learning_steps_and_short_intervals_are_left_alone():
    load = _by_interval(dict.fromkeys(range(0, 5), 9))
    first = review(None, rating=Rating.GOOD, reviewed_at=START, config=CONFIG, fuzz_seed="x")
    assert first.stage == MemoryStage.LEARNING
    assert due_balanced(None, first, reviewed_at=START, config=CONFIG, load=load) == first
    # A weak card reviewed the day after: two days, too short for fuzz.
    weak = MemoryState(MemoryStage.REVIEW, None, 0.3, 8.0, due=START, last_review=START - DAY, reps=3)
    short = _good(weak)
    assert (short.stage, short.due - START) == (MemoryStage.REVIEW, 2 * DAY)
    assert due_balanced(weak, short, reviewed_at=START, config=CONFIG, load=load) == short


def test_a_card_reviewed_early_does_not_weigh_on_the_day_it_leaves():
    after = _good(_in_review(20.0))
    drawn = (after.due - START).days
    low, high = fuzz_range(CONFIG.scheduler()._next_interval(stability=after.stability), maximum_interval=36_500) or (
        0,
        0,
    )
    other = low if drawn != low else high
    # The card itself is the one card due on the day fuzz drew; another day has one card too.
    early = _in_review(20.0, at=START + drawn * DAY)
    load = _by_interval(dict.fromkeys(range(low, high + 2), 3) | {drawn: 1, other: 1})
    assert due_balanced(early, after, reviewed_at=START, config=CONFIG, load=load).due == after.due


# --- through the API ----------------------------------------------------------------------------------------------


def _settings(client: APIClient, **changes: Any) -> dict[str, Any]:
    response = client.patch(SETTINGS_URL, changes, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def _load_cards(learner: Any, cards: list[Card], *, due_days: dict[int, int], now: datetime) -> None:
    """Review cards of the learner's due in `due_days[n]` per day n days from now, other cards of the shipped course."""
    rows = []
    pool = iter(cards)
    for days, count in due_days.items():
        for _ in range(count):
            rows.append(
                CardMemory(
                    learner=learner,
                    card=next(pool),
                    stage=MemoryStage.REVIEW,
                    stability=float(days),
                    difficulty=5.0,
                    due=now + days * DAY,
                    last_review=now - DAY,
                    first_review=now - 30 * DAY,
                    reps=3,
                )
            )
    CardMemory.objects.bulk_create(rows)


def _study_item(client: APIClient, card: Card) -> dict[str, Any]:
    response = client.get(STUDY, {"limit": 200})
    assert response.status_code == 200
    (item,) = [item for item in response.json()["cards"] if item["card"]["id"] == card.pk]
    return item


@pytest.fixture
def spare_cards(deck_cards) -> list[Card]:
    # The deck's later cards carry the load: due in the days to come, they are not in today's queue.
    return deck_cards[5:]


def _balanced_setup(learner: Any, client: APIClient, card: Card, spare: list[Card]) -> tuple[int, int]:
    """Load every day an Easy first review of `card` may land on except one that fuzz does not draw.

    Returns (fuzz's own interval in days, the empty day's).
    """
    hour = (datetime.now(UTC).hour + 12) % 24
    _settings(client, timezone="UTC", day_start_hour=hour, load_balancing=False)
    drawn = _study_item(client, card)["next_intervals"]["easy"] // 86400
    low, high = 6, 10  # an Easy first review: about 8 days, fuzzed 15% of 2.5..7 and 10% beyond, plus a day
    empty = drawn - 1 if drawn - 1 >= low else drawn + 1
    assert low <= empty <= high
    _load_cards(learner, spare, due_days={n: 2 for n in range(3, 14) if n != empty}, now=datetime.now(UTC))
    _settings(client, load_balancing=True)
    return drawn, empty


def test_a_preview_is_the_interval_the_review_then_gives(learner, learner_client, deck_cards, spare_cards):
    card = deck_cards[0]
    drawn, empty = _balanced_setup(learner, learner_client, card, spare_cards)
    preview = _study_item(learner_client, card)["next_intervals"]["easy"]
    assert preview == empty * 86400 != drawn * 86400
    response = post_review(learner_client, review_body(card, 4))
    assert response.status_code == 201, response.json()
    body = response.json()
    reviewed_at = datetime.fromisoformat(body["reviewed_at"])
    assert datetime.fromisoformat(body["due"]) - reviewed_at == timedelta(seconds=preview)
    assert ReviewLog.objects.get(pk=body["id"]).state_after == {**body["state"], "stage": 2}
    assert CardMemory.objects.get(learner=learner, card=card).due == datetime.fromisoformat(body["due"])


def test_a_review_card_preview_is_its_outcome(learner, learner_client, deck_cards, spare_cards):
    card = deck_cards[1]
    hour = (datetime.now(UTC).hour + 12) % 24
    _settings(learner_client, timezone="UTC", day_start_hour=hour)
    now = datetime.now(UTC)
    assert post_review(learner_client, review_body(card, 4, now - 40 * DAY)).status_code == 201
    _load_cards(learner, spare_cards, due_days={n: 1 + n % 2 for n in range(2, 25)}, now=now)
    item = without_recall_time(_study_item(learner_client, card))
    assert item["queue"] == "review"
    for rating, name in ((2, "hard"), (3, "good"), (4, "easy")):
        # Each rating in turn, on the same card state: undo puts it back, and restores the stored state.
        body = post_review(learner_client, review_body(card, rating)).json()
        outcome = datetime.fromisoformat(body["due"]) - datetime.fromisoformat(body["reviewed_at"])
        assert outcome == timedelta(seconds=item["next_intervals"][name]), name
        assert learner_client.post(f"/api/v1/reviews/{body['id']}/undo/").status_code == 200
        assert without_recall_time(_study_item(learner_client, card)) == item


def test_with_load_balancing_off_the_outcome_is_fuzz_own(learner, learner_client, deck_cards, spare_cards):
    card = deck_cards[0]
    drawn, _ = _balanced_setup(learner, learner_client, card, spare_cards)
    _settings(learner_client, load_balancing=False)
    body = post_review(learner_client, review_body(card, 4)).json()
    assert datetime.fromisoformat(body["due"]) - datetime.fromisoformat(body["reviewed_at"]) == drawn * DAY


def test_a_days_reviews_balance_against_the_counts_the_day_began_with(learner, learner_client, deck_cards, spare_cards):
    """Labels hold: a review today does not move the day another of today's reviews lands on; the next
    day's reviews find the day before's in their counts."""
    hour = (datetime.now(UTC).hour + 12) % 24
    _settings(learner_client, timezone="UTC", day_start_hour=hour)
    now = datetime.now(UTC)
    yesterday = now - DAY
    # One empty day in an Easy first review's range (6-10 days): all of yesterday's cards take it, as their labels
    # said; the day four after it lies in today's range only.
    _load_cards(learner, spare_cards, due_days={n: 3 for n in range(3, 14) if n not in (7, 11)}, now=yesterday)
    bodies = [review_body(card, 4, yesterday) for card in deck_cards[:2]]
    response = learner_client.post("/api/v1/reviews/batch/", {"reviews": bodies}, format="json")
    assert response.status_code == 200, response.json()
    intervals = [(datetime.fromisoformat(result["due"]) - yesterday).days for result in response.json()["results"]]
    assert intervals == [7, 7]
    # An upload that crosses into today: yesterday's third card still takes day 7, and today's review finds
    # the three on that day (today + 6) and takes the one still empty (today + 10).
    crossing = [review_body(deck_cards[2], 4, yesterday + timedelta(minutes=1)), review_body(deck_cards[3], 4, now)]
    response = learner_client.post("/api/v1/reviews/batch/", {"reviews": crossing}, format="json")
    assert response.status_code == 200, response.json()
    first, second = (datetime.fromisoformat(result["due"]) for result in response.json()["results"])
    assert (first - yesterday).days == 7
    assert (second - now).days == 10


def test_balancing_a_review_reads_the_day_start_counts_once(learner, learner_client, deck_cards, spare_cards):
    _load_cards(learner, spare_cards, due_days=dict.fromkeys(range(3, 14), 1), now=datetime.now(UTC))

    def statements(body: dict[str, Any]) -> list[str]:
        with CaptureQueriesContext(connection) as captured:
            assert post_review(learner_client, body).status_code == 201
        return [query["sql"] for query in captured.captured_queries if "srs_cardmemory" in query["sql"]]

    balanced = statements(review_body(deck_cards[0], 4))
    _settings(learner_client, load_balancing=False)
    plain = statements(review_body(deck_cards[1], 4))
    # The due counts, and the cards reviewed since the day began (where the day found them).
    assert len(balanced) == len(plain) + 2
    _settings(learner_client, load_balancing=True)
    # A learning step lands on no day to balance: no read.
    assert len(statements(review_body(deck_cards[2], 3))) == len(plain)


# --- replays --------------------------------------------------------------------------------------------------


def _events(bodies: list[dict[str, Any]]) -> list[ReviewEvent]:
    return [
        ReviewEvent(
            datetime.fromisoformat(body["reviewed_at"]), body["client_review_id"], Rating(body["rating"]), CONFIG
        )
        for body in bodies
    ]


def test_a_late_review_replays_the_history_without_balancing(learner, learner_client, deck_cards, spare_cards):
    card = deck_cards[0]
    now = datetime.now(UTC)
    first, last = review_body(card, 4, now - 30 * DAY), review_body(card, 3, now - 2 * DAY)
    # Every spare card due on the day fuzz draws for the last review: balanced, it lands elsewhere.
    drawn = replay(_events([first, last]), learner_id=learner.pk, card_id=card.pk)[-1].due
    _load_cards(learner, spare_cards, due_days={(drawn - now).days: 6}, now=now + (drawn - now) % DAY)
    for body in (first, last):
        assert post_review(learner_client, body).status_code == 201
    assert CardMemory.objects.get(learner=learner, card=card).due != drawn

    late = review_body(card, 3, now - 20 * DAY)
    assert post_review(learner_client, late).json()["replayed"] is True
    expected = replay(_events([first, late, last]), learner_id=learner.pk, card_id=card.pk)
    logs = ReviewLog.objects.filter(learner=learner, card=card).order_by("reviewed_at")
    assert [MemoryState.from_dict(log.state_after or {}) for log in logs] == expected
    assert CardMemory.objects.get(learner=learner, card=card).due == expected[-1].due


def test_undo_restores_the_balanced_state_the_review_before_left(learner, learner_client, deck_cards, spare_cards):
    card = deck_cards[0]
    _, empty = _balanced_setup(learner, learner_client, card, spare_cards)
    first = post_review(learner_client, review_body(card, 4)).json()
    second = post_review(learner_client, review_body(card, 3)).json()
    assert learner_client.post(f"/api/v1/reviews/{second['id']}/undo/").status_code == 200
    assert CardMemory.objects.get(learner=learner, card=card).due == datetime.fromisoformat(first["due"])
    assert datetime.fromisoformat(first["due"]) - datetime.fromisoformat(first["reviewed_at"]) == empty * DAY


def test_the_fuzz_seed_of_a_balanced_review_is_unchanged():
    # Balancing moves only the due date: the review count, and with it the next review's seed, stay.
    before = _in_review(20.0)
    after = _good(before)
    load = _by_interval(dict.fromkeys(range(0, 40), 5))
    balanced = due_balanced(before, after, reviewed_at=START, config=CONFIG, load=load)
    assert card_fuzz_seed(learner_id=1, card_id=2, state=balanced) == card_fuzz_seed(
        learner_id=1, card_id=2, state=after
    )


# --- settings ---------------------------------------------------------------------------------------------------


def test_easy_days_and_the_switch_are_saved_and_read(learner, learner_client):
    body = learner_client.get(SETTINGS_URL).json()
    assert (body["load_balancing"], body["easy_days"]) == (True, {})
    saved = _settings(learner_client, easy_days={"sunday": 0, "saturday": 0.5}, load_balancing=False)
    assert saved["easy_days"] == {"saturday": 0.5, "sunday": 0.0}
    assert learner_client.get(SETTINGS_URL).json()["easy_days"] == {"saturday": 0.5, "sunday": 0.0}
    assert saved["load_balancing"] is False
    row = SchedulingSettings.objects.get(learner=learner)
    assert (row.easy_days, row.load_balancing) == ({"saturday": 0.5, "sunday": 0.0}, False)
    assert _settings(learner_client, easy_days={})["easy_days"] == {}


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"easy_days": {"caturday": 0.5}}, "easy_days"),
        ({"easy_days": {"monday": 1.5}}, "easy_days"),
        ({"easy_days": {"monday": -0.1}}, "easy_days"),
        ({"easy_days": {"monday": True}}, "easy_days"),
        ({"easy_days": {"monday": "half"}}, "easy_days"),
        ({"easy_days": ["saturday"]}, "easy_days"),
        ({"easy_days": None}, "easy_days"),
        ({"load_balancing": "yes"}, "load_balancing"),
        ({"load_balancing": None}, "load_balancing"),
    ],
)
def test_bad_values_are_refused_and_change_nothing(learner_client, changes, field):
    response = learner_client.patch(SETTINGS_URL, changes | {"new_cards_per_day": 5}, format="json")
    assert response.status_code == 400, response.json()
    assert any(name == field or name.startswith(f"{field}.") for name in response.json()["error"]["fields"])
    assert not SchedulingSettings.objects.exists()


def test_the_service_names_every_weekday_rule(learner):
    values = scheduling_settings_values(SchedulingSettings(learner=learner))
    assert scheduling_settings_errors(values | {"easy_days": {"sunday": 0.0, "monday": 1}}) == {}
    errors = scheduling_settings_errors(values | {"easy_days": {"Sunday": 0.5}})
    assert "not a weekday" in errors["easy_days"][0]
    with pytest.raises(SettingsInvalid, match="easy_days"):
        scheduling_settings_update(learner=learner, changes={"easy_days": {"friday": 2}})


def test_a_stored_value_that_breaks_a_rule_reads_as_no_easy_days(learner, learner_client):
    _settings(learner_client, new_cards_per_day=5)
    SchedulingSettings.objects.filter(learner=learner).update(easy_days={"someday": 3})
    assert learner_client.get(SETTINGS_URL).json()["easy_days"] == {}


def test_due_counts_are_grouped_by_the_learners_day_across_a_clock_change(learner, spare_cards):
    settings = SchedulingSettings(learner=learner, timezone="America/New_York", day_start_hour=4)
    # New York moves its clocks forward on 8 March 2026 at 2:00; times around each day's 4:00 start.
    dues = [
        datetime(2026, 3, day, hour, minute, tzinfo=UTC)
        for day in range(6, 11)
        for hour, minute in ((7, 59), (8, 0), (8, 30), (9, 0))
    ]
    rows = [
        CardMemory(
            learner=learner,
            card=card,
            stage=MemoryStage.REVIEW,
            stability=10.0,
            difficulty=5.0,
            due=due,
            last_review=due - 10 * DAY,
            first_review=due - 10 * DAY,
            reps=2,
        )
        for card, due in zip(spare_cards, dues, strict=False)
    ]
    CardMemory.objects.bulk_create(rows)
    CardMemory.objects.filter(pk=rows[0].pk).update(suspended=True)
    load = due_load_get(learner_id=learner.pk, settings=settings, spans=[(date(2026, 3, 6), date(2026, 3, 9))])
    expected = Counter(learner_day(row.due, timezone="America/New_York", day_start_hour=4) for row in rows[1:])
    assert load.due_counts == {
        day: count for day, count in expected.items() if date(2026, 3, 6) <= day <= date(2026, 3, 9)
    }
    assert sum(load.due_counts.values()) < len(rows) - 1
    # Counted by the database and counted here alike, over spans with a gap between them, and
    # without an archived card.
    Card.objects.filter(pk=rows[5].card_id).update(archived=True)
    spans = [(date(2026, 3, 6), date(2026, 3, 6)), (date(2026, 3, 8), date(2026, 3, 9))]
    in_sql = due_load_get(learner_id=learner.pk, settings=settings, spans=spans)
    here = due_counts_read_here(learner_id=learner.pk, settings=settings, spans=spans)
    assert in_sql.due_counts == here
    assert date(2026, 3, 7) not in in_sql.due_counts
    assert set(in_sql.due_counts) == {date(2026, 3, 6), date(2026, 3, 8), date(2026, 3, 9)}


# --- labels that hold through a session -------------------------------------------------------------------------

_SESSION_RATINGS = ("easy", "good", "hard", "easy", "again", "good", "easy")
_RATING_NUMBERS = {"again": 1, "hard": 2, "good": 3, "easy": 4}


def _session_queue(learner: Any, client: APIClient, deck_cards: list[Card]) -> tuple[datetime, list[dict[str, Any]]]:
    """One fetch of a queue of overdue review cards with alike states and new cards, beside an uneven load."""
    hour = (datetime.now(UTC).hour + 12) % 24
    _settings(client, timezone="UTC", day_start_hour=hour)
    now = datetime.now(UTC)
    for offset, card in enumerate(deck_cards[:12]):
        assert (
            post_review(client, review_body(card, 4, now - 40 * DAY + offset * timedelta(minutes=1))).status_code == 201
        )
    # Every other day loaded: balancing keeps choosing the empty days that the session's reviews then fill.
    _load_cards(learner, deck_cards[16:], due_days=dict.fromkeys(range(10, 60, 2), 1), now=now)
    response = client.get(STUDY, {"limit": 200})
    assert response.status_code == 200
    items = [item for item in response.json()["cards"] if item["card"]["id"] in {card.pk for card in deck_cards[:16]}]
    assert {item["queue"] for item in items} == {"review", "new"}
    return now, items


def _labels_kept(items: list[dict[str, Any]], results: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Each review's interval against the label its rating showed: what does not agree."""
    wrong = []
    for item, (name, result) in zip(items, results, strict=True):
        shown = timedelta(seconds=item["next_intervals"][name])
        given = datetime.fromisoformat(result["due"]) - datetime.fromisoformat(result["reviewed_at"])
        if given != shown:
            wrong.append(f"card {item['card']['id']} {name}: shown {shown}, given {given}")
    return wrong


def _labels_in_anki_order(items: list[dict[str, Any]]) -> None:
    for item in items:
        days = {name: seconds // 86400 for name, seconds in item["next_intervals"].items()}
        if item["queue"] == "review":
            assert 1 <= days["hard"] < days["good"] < days["easy"], item
        assert item["next_intervals"]["hard"] <= item["next_intervals"]["good"] < item["next_intervals"]["easy"], item


def test_every_label_of_a_session_from_one_fetch_is_the_interval_its_review_gives(learner, learner_client, deck_cards):
    """Online, one review after another from one queue fetch, with load balancing on: no label lies."""
    _, items = _session_queue(learner, learner_client, deck_cards)
    _labels_in_anki_order(items)
    results = []
    for index, item in enumerate(items):
        name = _SESSION_RATINGS[index % len(_SESSION_RATINGS)]
        card = Card.objects.get(pk=item["card"]["id"])
        response = post_review(learner_client, review_body(card, _RATING_NUMBERS[name]))
        assert response.status_code == 201, response.json()
        results.append((name, response.json()))
    assert _labels_kept(items, results) == []


def test_every_label_holds_for_a_session_reviewed_offline_and_synced_as_one_batch(learner, learner_client, deck_cards):
    fetched_at, items = _session_queue(learner, learner_client, deck_cards)
    names = [_SESSION_RATINGS[index % len(_SESSION_RATINGS)] for index in range(len(items))]
    # Reviewed one after another between the fetch and the sync, as a client offline in between would.
    step = (datetime.now(UTC) - fetched_at) / (len(items) + 1)
    bodies = [
        review_body(Card.objects.get(pk=item["card"]["id"]), _RATING_NUMBERS[name], fetched_at + step * (index + 1))
        for index, (item, name) in enumerate(zip(items, names, strict=True))
    ]
    response = learner_client.post("/api/v1/reviews/batch/", {"reviews": bodies}, format="json")
    assert response.status_code == 200, response.json()
    assert _labels_kept(items, list(zip(names, response.json()["results"], strict=True))) == []


def test_the_database_tells_each_reviewed_cards_days_as_the_states_do(learner, learner_client, deck_cards):
    """reviewed_since (days counted in SQL) gives what reading every state here gives."""
    from apps.srs.reviews.due_load import reviewed_since

    _settings(learner_client, timezone="America/New_York", day_start_hour=4)
    now = datetime.now(UTC)
    day_start = now - timedelta(hours=6)
    # In review long before today, reviewed again today (twice for one): their day then is a due day.
    for card in deck_cards[:4]:
        assert post_review(learner_client, review_body(card, 4, now - 40 * DAY)).status_code in (200, 201)
        assert post_review(learner_client, review_body(card, 3, now - timedelta(hours=5))).status_code in (200, 201)
    assert post_review(learner_client, review_body(deck_cards[0], 1, now - timedelta(hours=1))).status_code == 201
    # New today: no state before, so no day then; one of them relearning now, so no day now either.
    for card in deck_cards[4:7]:
        assert post_review(learner_client, review_body(card, 3, now - timedelta(hours=2))).status_code in (200, 201)
    # Reviewed only before today: not one of the day's cards.
    assert post_review(learner_client, review_body(deck_cards[7], 3, now - 2 * DAY)).status_code in (200, 201)
    # Reviewed today and undone: the day's first review is the one left standing, if any.
    undone = post_review(learner_client, review_body(deck_cards[1], 4, now - timedelta(minutes=30))).json()
    assert learner_client.post(f"/api/v1/reviews/{undone['id']}/undo/").status_code == 200
    CardMemory.objects.filter(learner=learner, card=deck_cards[2]).update(suspended=True)
    Card.objects.filter(pk=deck_cards[3].pk).update(archived=True)
    settings = SchedulingSettings.objects.get(learner=learner)

    in_sql = sorted(
        reviewed_since(learner_id=learner.pk, settings=settings, day_start=day_start), key=lambda row: row.card_id
    )
    here = reviewed_since_read_here(learner_id=learner.pk, settings=settings, day_start=day_start)
    assert in_sql == sorted(here, key=lambda row: row.card_id)
    assert {row.card_id for row in in_sql} == {card.pk for card in deck_cards[:7]}
    assert sum(row.day_then is not None for row in in_sql) == 4
    assert sum(not row.weighs for row in in_sql) == 2
    assert any(row.day_now is not None for row in in_sql)
