"""The scheduling settings API: defaults, every validation rule, first-change creation and no rewritten history."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.db import IntegrityError

from apps.common.clock import time_text
from apps.srs.core.scheduling import DEFAULT_PARAMETERS, MemoryState, Rating, card_fuzz_seed, review, with_config
from apps.srs.models import ReviewLog, SchedulingSettings
from apps.srs.settings import services as settings_services
from apps.srs.settings.config import scheduler_config_from_json
from apps.srs.settings.services import scheduling_settings_update
from tests.support.api import make_learner
from tests.support.progress import days_ago
from tests.support.reviews import post_review, review_body

pytestmark = pytest.mark.django_db

URL = "/api/v1/srs/settings/"
DEFAULTS = {
    "desired_retention": 0.9,
    "learning_steps": [60, 600],
    "relearning_steps": [600],
    "maximum_interval_days": 36500,
    "new_cards_per_day": 20,
    "max_reviews_per_day": 200,
    "daily_goal": 0,
    "timezone": "UTC",
    "day_start_hour": 4,
    "fsrs_parameters": None,
    "leech_threshold": 8,
    "suspend_leeches": False,
    "load_balancing": True,
    "easy_days": {},
    "auto_optimize": True,
    "parameters_pinned": False,
    "optimized_at": None,
    "reviews_at_last_fit": 0,
    "parameter_fits": [],
    "memory_models": [],
}
ONE_DAY = 24 * 3600


def test_defaults_without_a_row(learner_client):
    body = learner_client.get(URL).json()
    assert {name: body[name] for name in DEFAULTS} == DEFAULTS
    assert body["fsrs_parameters_in_use"] == pytest.approx(list(DEFAULT_PARAMETERS))
    assert body["updated_at"] is None
    assert not SchedulingSettings.objects.exists()


def test_patch_creates_the_row_on_first_change_and_keeps_other_values(learner_client, learner):
    changes = {
        "desired_retention": 0.85,
        "learning_steps": [30, 300, 1800],
        "timezone": "Europe/Paris",
        "day_start_hour": 0,
        "suspend_leeches": True,
        "fsrs_parameters": list(DEFAULT_PARAMETERS),
    }
    response = learner_client.patch(URL, changes, format="json")
    assert response.status_code == 200, response.json()
    # The new desired retention queues a reschedule of the learner's review cards.
    assert response.json()["latest_reschedule"]["reason"] == "desired_retention"
    # The advice for the new settings is queued for a worker (tests/srs/test_retention_advice.py).
    assert response.json()["retention_advice"]["status"] == "computing"
    unchecked = {"updated_at": None, "latest_reschedule": None, "retention_advice": None}
    assert response.json() | unchecked == DEFAULTS | changes | unchecked | {
        "fsrs_parameters_in_use": pytest.approx(list(DEFAULT_PARAMETERS))
    }
    assert response.json()["updated_at"] is not None
    row = SchedulingSettings.objects.get(learner=learner)
    assert (row.desired_retention, row.timezone, row.new_cards_per_day) == (0.85, "Europe/Paris", 20)
    assert learner_client.get(URL).json() == response.json()
    # Back to the defaults' parameters: null.
    reset = learner_client.patch(URL, {"fsrs_parameters": None, "new_cards_per_day": 0}, format="json")
    assert reset.status_code == 200
    assert reset.json()["fsrs_parameters"] is None
    assert reset.json()["new_cards_per_day"] == 0
    assert reset.json()["desired_retention"] == 0.85
    assert SchedulingSettings.objects.count() == 1


def test_empty_patch_changes_nothing_and_creates_no_row(learner_client):
    response = learner_client.patch(URL, {}, format="json")
    assert response.status_code == 200
    assert response.json()["updated_at"] is None
    assert not SchedulingSettings.objects.exists()


def _out_of_bounds_parameters() -> list[float]:
    parameters = list(DEFAULT_PARAMETERS)
    parameters[0] = 1000.0
    return parameters


INVALID: list[tuple[str, Any]] = [
    ("desired_retention", 0.69),
    ("desired_retention", 0.995),
    ("desired_retention", 1),
    ("desired_retention", "high"),
    ("desired_retention", None),
    ("learning_steps", []),
    ("learning_steps", [0]),
    ("learning_steps", [-60]),
    ("learning_steps", [600, 60]),
    ("learning_steps", [60, 60]),
    ("learning_steps", [ONE_DAY]),
    ("learning_steps", list(range(1, 12))),
    ("learning_steps", ["a minute"]),
    ("learning_steps", 60),
    ("relearning_steps", []),
    ("relearning_steps", [0]),
    ("relearning_steps", [600, 300]),
    ("relearning_steps", [36501 * ONE_DAY]),
    ("maximum_interval_days", 0),
    ("maximum_interval_days", 36501),
    ("maximum_interval_days", 2.5),
    ("new_cards_per_day", -1),
    ("new_cards_per_day", 10000),
    ("max_reviews_per_day", -1),
    ("max_reviews_per_day", 100000),
    ("daily_goal", -1),
    ("daily_goal", 10000),
    ("daily_goal", 1.5),
    ("timezone", "Mars/Olympus_Mons"),
    ("timezone", "localtime"),
    ("timezone", ""),
    ("timezone", None),
    ("day_start_hour", -1),
    ("day_start_hour", 24),
    ("fsrs_parameters", list(DEFAULT_PARAMETERS)[:20]),
    ("fsrs_parameters", [*DEFAULT_PARAMETERS, 0.5]),
    ("fsrs_parameters", _out_of_bounds_parameters()),
    ("fsrs_parameters", ["w"] * 21),
    ("fsrs_parameters", "defaults"),
    ("leech_threshold", 0),
    ("leech_threshold", 101),
    ("suspend_leeches", "sometimes"),
    ("colour", "blue"),
]


@pytest.mark.parametrize(("field", "value"), INVALID, ids=[f"{f}={v!r}"[:40] for f, v in INVALID])
def test_each_invalid_value_is_a_400_naming_the_field_and_changes_nothing(learner_client, learner, field, value):
    learner_client.patch(URL, {"new_cards_per_day": 7}, format="json")
    before = learner_client.get(URL).json()
    # A valid change sent alongside is not applied either.
    response = learner_client.patch(URL, {"max_reviews_per_day": 11, field: value}, format="json")
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "invalid"
    # A bad list item is named by its index, e.g. learning_steps.0.
    assert any(name == field or name.startswith(f"{field}.") for name in error["fields"]), error
    assert field in error["message"]
    assert learner_client.get(URL).json() == before


EDGES: list[tuple[str, Any]] = [
    ("desired_retention", 0.7),
    ("desired_retention", 0.99),
    ("learning_steps", [ONE_DAY - 1]),
    ("learning_steps", list(range(1, 11))),
    ("relearning_steps", [36500 * ONE_DAY]),
    ("maximum_interval_days", 1),
    ("maximum_interval_days", 36500),
    ("new_cards_per_day", 9999),
    ("max_reviews_per_day", 0),
    ("max_reviews_per_day", 99999),
    ("timezone", "America/Argentina/Buenos_Aires"),
    ("day_start_hour", 23),
    ("leech_threshold", 1),
    ("leech_threshold", 100),
    ("suspend_leeches", False),
]


@pytest.mark.parametrize(("field", "value"), EDGES, ids=[f"{f}={v!r}"[:40] for f, v in EDGES])
def test_the_edges_of_each_range_are_accepted(learner_client, field, value):
    response = learner_client.patch(URL, {field: value}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()[field] == value


@pytest.mark.parametrize(("field", "value"), INVALID[:6], ids=[f"{f}={v!r}" for f, v in INVALID[:6]])
def test_an_invalid_first_change_creates_no_row(learner_client, field, value):
    assert learner_client.patch(URL, {field: value}, format="json").status_code == 400
    assert not SchedulingSettings.objects.exists()


def test_all_bad_fields_are_named_at_once(learner_client):
    response = learner_client.patch(
        URL, {"desired_retention": 2, "day_start_hour": 30, "timezone": "Nowhere"}, format="json"
    )
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"desired_retention", "day_start_hour", "timezone"}


def test_relearning_steps_are_checked_against_the_new_maximum_interval(learner_client):
    response = learner_client.patch(
        URL, {"maximum_interval_days": 1, "relearning_steps": [600, 2 * ONE_DAY]}, format="json"
    )
    assert response.status_code == 400
    assert "relearning_steps" in response.json()["error"]["fields"]
    # A day-long relearning step is fine while the maximum interval is longer.
    assert learner_client.patch(URL, {"relearning_steps": [600, ONE_DAY]}, format="json").status_code == 200
    assert learner_client.patch(URL, {"maximum_interval_days": 0}, format="json").status_code == 400


def test_a_non_object_body_is_a_400(learner_client):
    response = learner_client.patch(URL, [1, 2], format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"


def test_anonymous_is_401(api_client, db):
    assert api_client.get(URL).status_code == 401
    assert api_client.patch(URL, {"new_cards_per_day": 1}, format="json").status_code == 401


def test_learners_see_and_change_only_their_own(learner_client, learner):
    _, other = make_learner("brian")
    assert other.patch(URL, {"timezone": "Asia/Tokyo", "new_cards_per_day": 5}, format="json").status_code == 200
    mine = learner_client.get(URL).json()
    assert (mine["timezone"], mine["new_cards_per_day"]) == ("UTC", 20)
    learner_client.patch(URL, {"new_cards_per_day": 9}, format="json")
    assert other.get(URL).json()["new_cards_per_day"] == 5


def test_a_concurrent_first_change_is_retried_on_the_winners_row(learner, monkeypatch):
    # Another request created the row after this one looked for it and found none.
    rival = SchedulingSettings.objects.create(learner=learner, new_cards_per_day=3)
    original = settings_services._locked_row
    lookups: list[SchedulingSettings | None] = []

    def first_lookup_misses_the_rival(*, learner: Any) -> SchedulingSettings | None:
        found = None if not lookups else original(learner=learner)
        lookups.append(found)
        return found

    monkeypatch.setattr(settings_services, "_locked_row", first_lookup_misses_the_rival)
    settings = scheduling_settings_update(learner=learner, changes={"day_start_hour": 6})
    assert lookups == [None, rival]
    row = SchedulingSettings.objects.get(learner=learner)
    assert (row.pk, row.day_start_hour, row.new_cards_per_day) == (settings.pk, 6, 3)


def test_a_second_integrity_error_is_not_swallowed(learner, monkeypatch):
    def always_fails(*args: Any, **kwargs: Any) -> None:
        raise IntegrityError("unique")

    monkeypatch.setattr(SchedulingSettings, "save", always_fails)
    with pytest.raises(IntegrityError):
        settings_services.scheduling_settings_update(learner=learner, changes={"day_start_hour": 6})


def test_new_retention_changes_the_next_interval_and_never_the_log(learner_client, learner, deck_cards):
    card = deck_cards[0]
    start = days_ago(30)
    assert post_review(learner_client, review_body(card, 4, start)).status_code == 201
    assert post_review(learner_client, review_body(card, 3, start + timedelta(days=10))).status_code == 201
    logged = list(ReviewLog.objects.order_by("pk").values())
    assert logged[-1]["state_after"] is not None
    state = MemoryState.from_dict(logged[-1]["state_after"])
    old_profile = ReviewLog.objects.get(pk=logged[-1]["id"]).profile
    assert old_profile is not None

    assert learner_client.patch(URL, {"desired_retention": 0.75}, format="json").status_code == 200

    client_id = uuid.UUID(int=42)
    at = start + timedelta(days=25)
    response = post_review(learner_client, review_body(card, 3, at, client_review_id=str(client_id)))
    assert response.status_code == 201, response.json()
    old_config = scheduler_config_from_json(old_profile.config)
    new_config = with_config(old_config, desired_retention=0.75)
    seed = card_fuzz_seed(learner_id=learner.pk, card_id=card.pk, state=state)
    expected = review(state, rating=Rating.GOOD, reviewed_at=at, config=new_config, fuzz_seed=seed)
    unchanged = review(state, rating=Rating.GOOD, reviewed_at=at, config=old_config, fuzz_seed=seed)
    assert response.json()["due"] == time_text(expected.due)
    # A lower target retention waits longer before the next review.
    assert expected.due > unchanged.due

    assert list(ReviewLog.objects.filter(pk__in=[row["id"] for row in logged]).order_by("pk").values()) == logged
    new_log = ReviewLog.objects.get(pk=response.json()["id"])
    assert new_log.profile_id != logged[-1]["profile_id"]
    assert new_log.profile is not None and new_log.profile.config["desired_retention"] == 0.75
