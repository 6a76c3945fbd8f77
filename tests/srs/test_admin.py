"""The spaced-repetition admin: every page opens, the logs are read-only, settings obey the API's rules."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib import admin
from django.db import models
from django.urls import reverse

from apps.srs.models import (
    AnkiHistoryImport,
    CardMemory,
    CourseMemoryModel,
    DeckPass,
    LearnerMemoryModel,
    ParameterFit,
    Reschedule,
    ReviewLog,
    SchedulerProfile,
    SchedulingSettings,
    StoredRetentionAdvice,
)
from apps.srs.reviews.services import ReviewInput, reviews_submit
from apps.srs.settings.services import scheduling_settings_update

pytestmark = pytest.mark.django_db

# Every model of the app the admin shows.
MODELS = sorted(
    (model for model in admin.site._registry if model._meta.app_label == "srs"), key=lambda model: model.__name__
)
PACKAGE_BYTES = b"PK\x03\x04 the learner's own file"


@pytest.fixture
def srs_rows(learner, deck_cards) -> None:
    now = datetime.now(UTC)
    scheduling_settings_update(learner=learner, changes={"timezone": "Europe/Paris"})
    reviews_submit(
        learner=learner,
        reviews=[ReviewInput(card_id=deck_cards[0].pk, rating=3, client_review_id=uuid.uuid4(), reviewed_at=now)],
        now=now,
    )
    DeckPass.objects.create(
        learner=learner,
        deck=deck_cards[0].deck,
        known=1,
        total=2,
        started_at=now - timedelta(minutes=1),
        finished_at=now,
    )
    ParameterFit.objects.create(learner=learner, status="done", fitted_on_reviews=420, log_loss=0.3, rmse_bins=0.05)
    Reschedule.objects.create(learner=learner, reason="desired_retention", cards_total=3)
    StoredRetentionAdvice.objects.create(
        learner=learner, parameters_digest="0" * 64, parameters_source="default", desired_retention=0.9,
        deck_size_bucket=100, limits_digest="0" * 64, requested_at=now,
    )  # fmt: skip
    AnkiHistoryImport.objects.create(learner=learner, package=PACKAGE_BYTES, package_bytes=len(PACKAGE_BYTES))
    course_model = CourseMemoryModel.objects.create(
        course=deck_cards[0].deck.lesson.course, status="done", parameters=[0.5] * 21,
        card_factors={str(deck_cards[0].pk): -0.4}, learners=5, adopted=True, finished_at=now, log_loss=0.31,
        previous_log_loss=0.33,
    )  # fmt: skip
    LearnerMemoryModel.objects.create(memory_model=course_model, learner=learner, uses_course_model=True)


def _url(model: type[models.Model], action: str, *args: object) -> str:
    return reverse(f"admin:srs_{model._meta.model_name}_{action}", args=args)


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_every_page_opens(staff_client, srs_rows, model):
    assert staff_client.get(_url(model, "changelist")).status_code == 200
    assert staff_client.get(_url(model, "changelist"), {"q": "ada"}).status_code == 200
    row = model.objects.first()
    assert staff_client.get(_url(model, "change", row.pk)).status_code == 200


def test_every_srs_model_has_an_admin_page():
    assert {ParameterFit, Reschedule, StoredRetentionAdvice, AnkiHistoryImport, CourseMemoryModel} <= set(MODELS)


def test_a_course_models_page_shows_each_learners_decision_and_trains_the_course_again(staff_client, srs_rows):
    row = CourseMemoryModel.objects.get()
    page = staff_client.get(_url(CourseMemoryModel, "change", row.pk)).content.decode()
    assert "ada" in page and "Uses course model" in page
    listing = staff_client.get(_url(CourseMemoryModel, "changelist")).content.decode()
    assert 'alt="True"' in listing
    response = staff_client.post(
        _url(CourseMemoryModel, "changelist"), {"action": "train_again", "_selected_action": [row.pk]}, follow=True
    )
    assert response.status_code == 200
    assert "is queued" in response.content.decode()
    queued = CourseMemoryModel.objects.exclude(pk=row.pk).get()
    assert (queued.course_id, queued.status) == (row.course_id, "queued")
    # Asked again while it is queued, the admin says so and queues nothing more.
    again = staff_client.post(
        _url(CourseMemoryModel, "changelist"), {"action": "train_again", "_selected_action": [row.pk]}, follow=True
    )
    assert "already queued or running" in again.content.decode()
    assert CourseMemoryModel.objects.count() == 2


def test_an_anki_history_import_page_does_not_show_the_package(staff_client, srs_rows):
    row = AnkiHistoryImport.objects.get()
    page = staff_client.get(_url(AnkiHistoryImport, "change", row.pk)).content
    assert b"the learner's own file" not in page


@pytest.mark.parametrize("model", [ReviewLog, DeckPass, SchedulerProfile, CardMemory], ids=lambda model: model.__name__)
def test_history_cannot_be_added_or_deleted(staff_client, srs_rows, model):
    row = model.objects.first()
    assert staff_client.get(_url(model, "add")).status_code == 403
    assert staff_client.post(_url(model, "delete", row.pk), {"post": "yes"}).status_code == 403
    assert model.objects.filter(pk=row.pk).exists()


def test_review_log_rows_cannot_be_changed(staff_client, srs_rows):
    log = ReviewLog.objects.get()
    response = staff_client.post(_url(ReviewLog, "change", log.pk), {"rating": 1})
    assert response.status_code == 403
    log.refresh_from_db()
    assert log.rating == 3


def test_settings_form_applies_the_api_rules(staff_client, srs_rows, learner):
    settings = SchedulingSettings.objects.get(learner=learner)
    form = {
        "learner": learner.pk,
        "desired_retention": "0.9",
        "learning_steps": "[600, 60]",
        "relearning_steps": "[600]",
        "maximum_interval_days": "36500",
        "new_cards_per_day": "20",
        "max_reviews_per_day": "200",
        "daily_goal": "0",
        "timezone": "Nowhere/Special",
        "day_start_hour": "4",
        "fsrs_parameters": "null",
        "leech_threshold": "8",
        "easy_days": "{}",
    }
    response = staff_client.post(_url(SchedulingSettings, "change", settings.pk), form)
    assert response.status_code == 200
    assert set(response.context["adminform"].form.errors) == {"learning_steps", "timezone"}
    settings.refresh_from_db()
    assert (settings.learning_steps, settings.timezone) == ([60, 600], "Europe/Paris")

    fixed = form | {"learning_steps": "[60, 600, 3600]", "timezone": "Asia/Tokyo"}
    assert staff_client.post(_url(SchedulingSettings, "change", settings.pk), fixed).status_code == 302
    settings.refresh_from_db()
    assert (settings.learning_steps, settings.timezone) == ([60, 600, 3600], "Asia/Tokyo")
