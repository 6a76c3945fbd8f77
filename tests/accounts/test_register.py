"""Registering a learner account: the email is the username, unique whatever its case."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from apps.accounts.models import LearnerProfile
from apps.srs.models import SchedulingSettings
from tests.accounts.conftest import client_with

pytestmark = pytest.mark.django_db

REGISTER = "/api/v1/auth/register/"
BODY = {
    "email": "  Lin.Yu@Example.COM ",
    "password": "a quiet orbit of tea",
    "display_name": " Lin ",
    "timezone": "Asia/Tokyo",
}


def test_registering_creates_the_account_signed_in(api_client):
    response = api_client.post(REGISTER, BODY, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    user = get_user_model().objects.get()
    assert (user.username, user.email) == ("lin.yu@example.com", "lin.yu@example.com")
    assert user.check_password("a quiet orbit of tea")
    assert LearnerProfile.objects.get(learner=user).display_name == "Lin"
    assert SchedulingSettings.objects.get(learner=user).timezone == "Asia/Tokyo"
    assert set(body) == {"token", "user"}
    assert body["user"]["id"] == user.pk
    assert body["user"]["username"] == "lin.yu@example.com"
    assert body["user"]["display_name"] == "Lin"
    assert body["user"]["scheduling"]["timezone"] == "Asia/Tokyo"
    me = client_with(body["token"]).get("/api/v1/me/")
    assert me.status_code == 200
    assert me.json() == body["user"]


def test_an_email_taken_in_another_case_is_a_400(api_client):
    assert api_client.post(REGISTER, BODY, format="json").status_code == 201
    response = api_client.post(REGISTER, {**BODY, "email": "LIN.YU@example.com"}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert error["fields"] == {"email": ["An account with this email already exists."]}
    assert get_user_model().objects.count() == 1


def test_the_database_refuses_an_email_differing_only_in_case(learner):
    with pytest.raises(IntegrityError), transaction.atomic():
        get_user_model().objects.create_user(username="other", email="ADA@Example.com", password="x")
    # Accounts without an email (made by staff or scripts) are not caught by the index.
    get_user_model().objects.create_user(username="one", password="x")
    get_user_model().objects.create_user(username="two", password="x")


@pytest.mark.parametrize(
    ("password", "expected"),
    [
        ("short", "This password is too short. It must contain at least 8 characters."),
        ("lin.yu.example", "The password is too similar to the username."),
        ("password123", "This password is too common."),
        ("83927461502", "This password is entirely numeric."),
    ],
    ids=["short", "like the email (the username)", "common", "numeric"],
)
def test_a_weak_password_is_a_400_with_the_reasons(api_client, password, expected):
    response = api_client.post(REGISTER, {**BODY, "password": password}, format="json")
    assert response.status_code == 400
    fields = response.json()["error"]["fields"]
    assert list(fields) == ["password"]
    assert expected in fields["password"]
    assert not get_user_model().objects.exists()


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "utc+2", "localtime", ""])
def test_a_time_zone_that_is_not_an_iana_name_is_a_400(api_client, zone):
    response = api_client.post(REGISTER, {**BODY, "timezone": zone}, format="json")
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["timezone"]
    assert not get_user_model().objects.exists()


def test_missing_fields_are_all_named(api_client):
    response = api_client.post(REGISTER, {}, format="json")
    assert response.status_code == 400
    fields = response.json()["error"]["fields"]
    assert fields == {name: ["This field is required."] for name in ("email", "password", "display_name", "timezone")}


def test_a_blank_display_name_or_bad_email_is_a_400(api_client):
    response = api_client.post(REGISTER, {**BODY, "display_name": "   ", "email": "not-an-email"}, format="json")
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"display_name", "email"}
    assert not get_user_model().objects.exists()


def test_every_problem_is_reported_at_once_and_nothing_is_created(api_client, learner):
    body = {**BODY, "email": "ADA@example.com", "password": "123", "timezone": "Nowhere/Land"}
    response = api_client.post(REGISTER, body, format="json")
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"email", "password", "timezone"}
    assert get_user_model().objects.count() == 1
