"""Reviewing as a test does: the shipped deck, review bodies, and learners racing each other."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.db import connection
from rest_framework.test import APIClient

from apps.content.models import Card
from apps.srs.settings.services import scheduling_settings_update

DECK = "tf-data-pipelines"


def review_body(card: Card, rating: int = 3, at: datetime | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"card": card.pk, "rating": rating, "client_review_id": str(uuid.uuid4()), **extra}
    if at is not None:
        body["reviewed_at"] = at.isoformat()
    return body


def post_review(client: APIClient, body: dict[str, Any]) -> Any:
    return client.post("/api/v1/reviews/", body, format="json")


def without_recall_time(data: Any) -> Any:
    """A response body less every recall_computed_at, which says when that request was answered."""
    if isinstance(data, dict):
        return {key: without_recall_time(value) for key, value in data.items() if key != "recall_computed_at"}
    if isinstance(data, list):
        return [without_recall_time(item) for item in data]
    return data


def load_balancing_off(learner: Any) -> None:
    """For tests that compare stored due dates with a plain replay of the log: balanced dates may differ."""
    scheduling_settings_update(learner=learner, changes={"load_balancing": False})


# Only stops a deadlock from hanging the suite; a healthy race takes well under a second.
JOIN_TIMEOUT_S = 60


def run_together(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Run work(0..count-1) in threads, each on its own database connection, released at one moment."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count
    errors: list[BaseException] = []

    def target(index: int) -> None:
        try:
            connection.ensure_connection()  # connect first, so the race is in the work itself
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
