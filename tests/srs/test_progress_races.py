"""Settings and deck passes from real concurrent connections: first changes merge, a pass is saved once."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.srs.models import DeckPass, SchedulingSettings
from tests.support.api import make_learner
from tests.support.reviews import DECK, run_together

pytestmark = [
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def racer_client(shipped_course) -> tuple[Any, APIClient]:
    return make_learner("racer")


CHANGES: list[dict[str, Any]] = [
    {"new_cards_per_day": 7},
    {"max_reviews_per_day": 70},
    {"day_start_hour": 6},
    {"leech_threshold": 5},
    {"maximum_interval_days": 365},
    {"timezone": "Asia/Tokyo"},
    {"desired_retention": 0.85},
    {"suspend_leeches": True},
]


def test_simultaneous_first_changes_all_land_on_one_row(racer_client):
    user, client = racer_client
    statuses = run_together(
        len(CHANGES), lambda index: client.patch("/api/v1/srs/settings/", CHANGES[index], format="json").status_code
    )
    assert statuses == [200] * len(CHANGES)
    row = SchedulingSettings.objects.get(learner=user)
    for change in CHANGES:
        for name, value in change.items():
            assert getattr(row, name) == value


def test_the_same_pass_sent_at_once_is_saved_once(racer_client):
    user, client = racer_client
    finished = datetime.now(UTC).replace(microsecond=0)
    body = {
        "known": 20,
        "total": 30,
        "started_at": (finished - timedelta(minutes=3)).isoformat(),
        "finished_at": finished.isoformat(),
        "client_pass_id": str(uuid.uuid4()),
    }
    responses = run_together(8, lambda _: client.post(f"/api/v1/decks/{DECK}/passes/", body, format="json"))
    assert sorted(response.status_code for response in responses) == [200] * 7 + [201]
    assert len({response.json()["id"] for response in responses}) == 1
    assert DeckPass.objects.filter(learner=user).count() == 1


def test_different_passes_sent_at_once_under_one_id_save_only_the_first(racer_client):
    user, client = racer_client
    finished = datetime.now(UTC).replace(microsecond=0)
    client_pass_id = str(uuid.uuid4())

    def send(index: int) -> Any:
        body = {
            "known": index,
            "total": 30,
            "started_at": (finished - timedelta(minutes=3)).isoformat(),
            "finished_at": finished.isoformat(),
            "client_pass_id": client_pass_id,
        }
        return client.post(f"/api/v1/decks/{DECK}/passes/", body, format="json")

    responses = run_together(6, send)
    assert sorted(response.status_code for response in responses) == [201] + [409] * 5
    assert {r.json()["error"]["code"] for r in responses if r.status_code == 409} == {"idempotency_key_reused"}
    saved = DeckPass.objects.get(learner=user)
    assert [r.json()["known"] for r in responses if r.status_code == 201] == [saved.known]
