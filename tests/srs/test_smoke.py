"""First checks of the study/review flow through the API."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.srs.conftest import DECK, post_review, review_body

pytestmark = pytest.mark.django_db


def test_study_review_undo(learner_client, deck_cards):
    study = learner_client.get(f"/api/v1/decks/{DECK}/study/").json()
    assert study["counts"]["new_due"] == 20
    assert [c["queue"] for c in study["cards"]] == ["new"] * 20
    card = deck_cards[0]
    first = post_review(learner_client, review_body(card, 3))
    assert first.status_code == 201, first.json()
    again = learner_client.post(
        "/api/v1/reviews/",
        {**first.json(), "card": card.pk, "rating": 3, "client_review_id": first.json()["client_review_id"]},
        format="json",
    )
    assert again.status_code == 200
    assert again.json()["duplicate"] is True
    undo = learner_client.post(f"/api/v1/reviews/{first.json()['id']}/undo/")
    assert undo.status_code == 200, undo.json()
    assert undo.json()["state"] is None
    assert learner_client.post(f"/api/v1/reviews/{first.json()['id']}/undo/").status_code == 409
    now = datetime.now(UTC)
    batch = learner_client.post(
        "/api/v1/reviews/batch/",
        {
            "reviews": [
                review_body(card, 3, now - timedelta(days=2)),
                review_body(card, 1, now - timedelta(days=3)),
            ]
        },
        format="json",
    )
    assert batch.status_code == 200, batch.json()
