"""Settings and deck passes from real concurrent connections: first changes merge, a pass is saved once."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from apps.srs.models import DeckPass, SchedulingSettings
from tests.srs.conftest import DECK

pytestmark = [
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="SQLite serialises every writer on one file lock, so there is no race to show; "
        "run with DATABASE_URL=postgres://... to test it.",
    ),
    pytest.mark.django_db(transaction=True),
]

# Only stops a deadlock from hanging the suite; a healthy run takes well under a second.
JOIN_TIMEOUT_S = 60


def run_together(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Run work(0..count-1) in threads, each on its own connection, released at the same instant."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count
    errors: list[BaseException] = []

    def target(index: int) -> None:
        try:
            connection.ensure_connection()
            barrier.wait(timeout=JOIN_TIMEOUT_S)
            results[index] = work(index)
        except BaseException as error:  # reported by the assertion below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=target, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=JOIN_TIMEOUT_S)
    assert not any(thread.is_alive() for thread in threads), "a thread is stuck: deadlock?"
    assert not errors, errors
    return results


@pytest.fixture
def racer_client(shipped_course) -> tuple[Any, APIClient]:
    user = get_user_model().objects.create_user(username="racer", password="a long enough passphrase")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return user, client


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
