"""/me/: the learner's account, and the profile that decides how they appear on leaderboards."""

from __future__ import annotations

import pytest

from apps.accounts.models import LearnerProfile
from tests.support.api import client_for

pytestmark = pytest.mark.django_db

ME = "/api/v1/me/"


def test_a_learner_without_a_profile_has_the_defaults_and_reading_creates_nothing(learner, learner_client):
    response = learner_client.get(ME)
    assert response.status_code == 200
    body = response.json()
    assert {key: body[key] for key in ("username", "email", "is_staff", "display_name", "show_on_leaderboards")} == {
        "username": "ada",
        "email": "ada@example.com",
        "is_staff": False,
        "display_name": "",
        "show_on_leaderboards": False,
    }
    assert not LearnerProfile.objects.exists()


def test_patch_changes_the_name_and_the_opt_in(learner, learner_client):
    response = learner_client.patch(ME, {"display_name": "  Ada L.  "}, format="json")
    assert response.status_code == 200
    assert response.json()["display_name"] == "Ada L."
    response = learner_client.patch(ME, {"show_on_leaderboards": True}, format="json")
    assert response.json()["show_on_leaderboards"] is True
    profile = LearnerProfile.objects.get(learner=learner)
    assert (profile.display_name, profile.show_on_leaderboards) == ("Ada L.", True)
    assert learner_client.get(ME).json()["show_on_leaderboards"] is True


@pytest.mark.parametrize(
    "body",
    [{"show_on_leaderboards": True}, {"show_on_leaderboards": True, "display_name": "   "}],
    ids=["no name yet", "blank name"],
)
def test_opting_in_needs_a_display_name(learner, learner_client, body):
    response = learner_client.patch(ME, body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"display_name": ["Set a display name to appear on leaderboards."]}
    assert not LearnerProfile.objects.filter(show_on_leaderboards=True).exists()


def test_an_opted_in_learner_cannot_blank_their_name(learner, learner_client):
    LearnerProfile.objects.create(learner=learner, display_name="Ada", show_on_leaderboards=True)
    assert learner_client.patch(ME, {"display_name": ""}, format="json").status_code == 400
    assert LearnerProfile.objects.get(learner=learner).display_name == "Ada"
    response = learner_client.patch(ME, {"display_name": "", "show_on_leaderboards": False}, format="json")
    assert response.status_code == 200


@pytest.mark.parametrize(
    "body",
    [{"username": "root"}, {"is_staff": True}, {"email": "x@example.com"}, {"display_name": "x" * 51}],
    ids=["username", "is_staff", "email", "name too long"],
)
def test_read_only_or_invalid_fields_are_a_400_and_change_nothing(learner, learner_client, body):
    response = learner_client.patch(ME, body, format="json")
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == set(body)
    learner.refresh_from_db()
    assert (learner.username, learner.is_staff, learner.email) == ("ada", False, "ada@example.com")
    assert not LearnerProfile.objects.exists()


def test_staff_see_is_staff(staff_user):
    client = client_for(staff_user)
    assert client.get(ME).json()["is_staff"] is True


def test_anonymous_gets_a_401(api_client):
    assert api_client.get(ME).status_code == 401
    assert api_client.patch(ME, {"display_name": "x"}, format="json").status_code == 401
