"""Account writes report every problem of a request in one answer: the body's own and the rules' behind it."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from apps.accounts.models import LearnerProfile
from apps.reminders.models import ReminderPreference
from apps.srs.models import SchedulingSettings
from tests.support.accounts import PASSWORD

pytestmark = pytest.mark.django_db

REGISTER = "/api/v1/auth/register/"
ME = "/api/v1/me/"
PASSWORD_CHANGE = "/api/v1/auth/password/change/"


def _fields(response) -> dict[str, list[str]]:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid"
    return error["fields"]


def test_registering_reports_an_undeliverable_email_a_short_password_and_missing_fields_together(api_client, learner):
    fields = _fields(api_client.post(REGISTER, {"email": "\u017fally@example.com", "password": "x"}, format="json"))
    assert set(fields) == {"email", "password", "display_name", "timezone"}
    assert "ASCII" in fields["email"][0]
    assert any("too short" in message for message in fields["password"])
    assert get_user_model().objects.count() == 1


def test_registering_reports_a_mistyped_field_with_the_rules_of_the_others(api_client, learner):
    body = {"email": "ada@", "password": "x", "display_name": 7, "timezone": "Nowhere/Land"}
    fields = _fields(api_client.post(REGISTER, body, format="json"))
    assert set(fields) == {"email", "password", "display_name", "timezone"}
    assert get_user_model().objects.count() == 1


def test_me_reports_an_unknown_field_with_bad_settings(learner, learner_client):
    body = {
        "username": "root",
        "scheduling": {"day_start_hour": 99, "desired_retention": 2, "timezone": "Nowhere/Land"},
    }
    fields = _fields(learner_client.patch(ME, body, format="json"))
    assert set(fields) == {
        "username",
        "scheduling.day_start_hour",
        "scheduling.desired_retention",
        "scheduling.timezone",
    }
    assert not SchedulingSettings.objects.exists()


def test_me_reports_mistyped_and_out_of_range_fields_of_every_section_together(learner, learner_client):
    body = {
        "show_on_leaderboards": True,
        "colour": "blue",
        "scheduling": {"day_start_hour": "four", "new_cards_per_day": -1, "ghost": 1},
        "email_settings": {"review_reminders": True, "reminder_hour": 30},
    }
    fields = _fields(learner_client.patch(ME, body, format="json"))
    assert set(fields) == {
        "display_name",
        "colour",
        "scheduling.day_start_hour",
        "scheduling.new_cards_per_day",
        "scheduling.ghost",
        "email_settings.reminder_hour",
    }
    assert not LearnerProfile.objects.exists()
    assert not SchedulingSettings.objects.exists()
    assert not ReminderPreference.objects.exists()


def test_a_wrong_current_password_and_a_weak_new_one_are_reported_together(learner, learner_client):
    body = {"current_password": "not it", "new_password": "x"}
    fields = _fields(learner_client.post(PASSWORD_CHANGE, body, format="json"))
    assert set(fields) == {"current_password", "new_password"}
    learner.refresh_from_db()
    assert learner.check_password(PASSWORD)
