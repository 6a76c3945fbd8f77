"""/me/: the account, profile, scheduling settings and email settings, read and changed together."""

from __future__ import annotations

import pytest

from apps.accounts.models import LearnerProfile
from apps.reminders.models import ReminderPreference
from apps.srs.models import SchedulingSettings

pytestmark = pytest.mark.django_db

ME = "/api/v1/me/"


def test_the_account_with_defaults_and_reading_creates_nothing(learner, learner_client):
    response = learner_client.get(ME)
    assert response.status_code == 200
    body = response.json()
    assert body.pop("date_joined").startswith(str(learner.date_joined.year))
    assert body == {
        "id": learner.pk,
        "username": "ada",
        "email": "ada@example.com",
        "is_staff": False,
        "display_name": "",
        "show_on_leaderboards": False,
        "scheduling": {
            "timezone": "UTC",
            "day_start_hour": 4,
            "desired_retention": 0.9,
            "new_cards_per_day": 20,
            "max_reviews_per_day": 200,
        },
        "email_settings": {"review_reminders": False, "reminder_hour": 18},
    }
    assert not LearnerProfile.objects.exists()
    assert not SchedulingSettings.objects.exists()
    assert not ReminderPreference.objects.exists()


def test_patch_changes_nested_parts_partially(learner, learner_client):
    response = learner_client.patch(
        ME,
        {
            "display_name": "Ada",
            "scheduling": {"timezone": "Europe/Paris", "new_cards_per_day": 5},
            "email_settings": {"review_reminders": True},
        },
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["display_name"] == "Ada"
    assert body["scheduling"] == {
        "timezone": "Europe/Paris",
        "day_start_hour": 4,
        "desired_retention": 0.9,
        "new_cards_per_day": 5,
        "max_reviews_per_day": 200,
    }
    assert body["email_settings"] == {"review_reminders": True, "reminder_hour": 18}
    response = learner_client.patch(ME, {"email_settings": {"reminder_hour": 7}}, format="json")
    assert response.json()["email_settings"] == {"review_reminders": True, "reminder_hour": 7}
    assert learner_client.get(ME).json() == response.json()
    settings = SchedulingSettings.objects.get(learner=learner)
    assert (settings.timezone, settings.new_cards_per_day) == ("Europe/Paris", 5)
    preference = ReminderPreference.objects.get(learner=learner)
    assert (preference.enabled, preference.local_hour) == (True, 7)
    # The same settings the scheduling endpoint shows.
    assert learner_client.get("/api/v1/srs/settings/").json()["timezone"] == "Europe/Paris"


def test_scheduling_uses_the_settings_rules(learner, learner_client):
    response = learner_client.patch(
        ME, {"scheduling": {"timezone": "Moon/Base", "desired_retention": 0.5, "day_start_hour": 24}}, format="json"
    )
    assert response.status_code == 400
    fields = response.json()["error"]["fields"]
    assert set(fields) == {"scheduling.timezone", "scheduling.desired_retention", "scheduling.day_start_hour"}
    assert fields["scheduling.desired_retention"] == ["Expected a number from 0.7 to 0.99, got 0.5."]


def test_a_bad_value_anywhere_changes_nothing_anywhere(learner, learner_client):
    body = {
        "display_name": "Ada",
        "show_on_leaderboards": True,
        "scheduling": {"timezone": "Europe/Paris"},
        "email_settings": {"review_reminders": True, "reminder_hour": 24},
    }
    response = learner_client.patch(ME, body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {
        "email_settings.reminder_hour": ["Expected a whole number from 0 to 23, got 24."]
    }
    assert not LearnerProfile.objects.exists()
    assert not SchedulingSettings.objects.exists()
    assert not ReminderPreference.objects.exists()

    body["email_settings"] = {"review_reminders": True}
    body["scheduling"] = {"timezone": "Nowhere/Land"}
    response = learner_client.patch(ME, body, format="json")
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["scheduling.timezone"]
    assert not LearnerProfile.objects.exists()
    assert not ReminderPreference.objects.exists()


def test_every_part_reports_its_problems_at_once(learner, learner_client):
    body = {"show_on_leaderboards": True, "scheduling": {"new_cards_per_day": -1}}
    response = learner_client.patch(ME, body, format="json")
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"display_name", "scheduling.new_cards_per_day"}


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"id": 5}, {"id"}),
        ({"date_joined": "2020-01-01T00:00:00Z"}, {"date_joined"}),
        ({"email": "x@example.com"}, {"email"}),
        ({"username": "root", "is_staff": True}, {"username", "is_staff"}),
        ({"colour": "blue"}, {"colour"}),
        ({"scheduling": {"learning_steps": [60]}}, {"scheduling.learning_steps"}),
        ({"email_settings": {"weekly_digest": True}}, {"email_settings.weekly_digest"}),
        ({"scheduling": "Europe/Paris"}, {"scheduling.non_field_errors"}),
        ({"email_settings": {"review_reminders": "often"}}, {"email_settings.review_reminders"}),
    ],
    ids=[
        "id",
        "date_joined",
        "email",
        "username",
        "unknown",
        "nested unknown",
        "email unknown",
        "not an object",
        "type",
    ],
)
def test_read_only_unknown_or_mistyped_fields_are_a_400(learner, learner_client, body, fields):
    response = learner_client.patch(ME, body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert set(response.json()["error"]["fields"]) == fields
    learner.refresh_from_db()
    assert (learner.username, learner.email, learner.is_staff) == ("ada", "ada@example.com", False)
    assert not SchedulingSettings.objects.exists()
    assert not ReminderPreference.objects.exists()


def test_anonymous_gets_a_401(api_client):
    assert api_client.get(ME).status_code == 401
    assert api_client.patch(ME, {"display_name": "x"}, format="json").status_code == 401
    assert api_client.get(f"{ME}export/").status_code == 401
    assert api_client.post(f"{ME}delete/", {"password": "x"}, format="json").status_code == 401
