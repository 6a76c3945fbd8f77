"""Signing up: the same answer whether or not the address has an account, the difference told only by email.

The email is the username, unique whatever its case, and accepted only in a form the mail path can
deliver to.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from apps.accounts.models import AccountEmail, LearnerProfile, PendingRegistration
from apps.srs.models import SchedulingSettings
from tests.support.api import client_with_token

pytestmark = pytest.mark.django_db

REGISTER = "/api/v1/auth/register/"
CONFIRM = "/api/v1/auth/register/confirm/"
BODY = {
    "email": "  Lin.Yu@Example.COM ",
    "password": "a quiet orbit of tea",
    "display_name": " Lin ",
    "timezone": "Asia/Tokyo",
}


def _confirm_token(message) -> str:
    link = next(word for word in message.body.split() if "/confirm-email?" in word)
    return parse_qs(urlsplit(link).query)["token"][0]


def test_signing_up_emails_a_link_that_creates_the_account_signed_in(api_client, mailoutbox, deliver_account_emails):
    response = api_client.post(REGISTER, BODY, format="json")
    assert response.status_code == 202, response.json()
    assert "Check your inbox" in response.json()["detail"]
    assert not get_user_model().objects.exists()
    assert deliver_account_emails() == ["sent"]
    [message] = mailoutbox
    assert message.to == ["lin.yu@example.com"]
    confirmed = api_client.post(CONFIRM, {"token": _confirm_token(message), "device_name": "Pixel 8"}, format="json")
    assert confirmed.status_code == 201, confirmed.json()
    body = confirmed.json()
    user = get_user_model().objects.get()
    assert (user.username, user.email) == ("lin.yu@example.com", "lin.yu@example.com")
    assert user.check_password("a quiet orbit of tea")
    assert LearnerProfile.objects.get(learner=user).display_name == "Lin"
    assert SchedulingSettings.objects.get(learner=user).timezone == "Asia/Tokyo"
    assert set(body) == {"token", "expiry", "device_id", "user"}
    assert body["user"]["username"] == "lin.yu@example.com"
    assert body["user"]["scheduling"]["timezone"] == "Asia/Tokyo"
    me = client_with_token(body["token"]).get("/api/v1/me/")
    assert me.status_code == 200
    assert me.json() == body["user"]
    devices = client_with_token(body["token"]).get("/api/v1/auth/devices/").json()
    assert [(device["name"], device["current"]) for device in devices] == [("Pixel 8", True)]


def test_a_link_works_once(api_client, mailoutbox, deliver_account_emails):
    api_client.post(REGISTER, BODY, format="json")
    deliver_account_emails()
    token = _confirm_token(mailoutbox[0])
    assert api_client.post(CONFIRM, {"token": token}, format="json").status_code == 201
    again = api_client.post(CONFIRM, {"token": token}, format="json")
    assert again.status_code == 400
    assert again.json()["error"]["code"] == "invalid_token"
    assert get_user_model().objects.count() == 1


@pytest.mark.parametrize("token", ["", "x", "MQ:1vX:forged", "a" * 300])
def test_a_forged_or_malformed_link_is_a_400(api_client, token):
    response = api_client.post(CONFIRM, {"token": token}, format="json")
    assert response.status_code == 400
    assert not get_user_model().objects.exists()


def test_an_address_with_an_account_gets_the_same_answer_and_a_note_by_email(
    api_client, learner, mailoutbox, deliver_account_emails
):
    new = api_client.post(REGISTER, {**BODY, "email": "new@example.com"}, format="json")
    taken = api_client.post(REGISTER, {**BODY, "email": "ADA@example.com"}, format="json")
    assert (new.status_code, taken.status_code) == (202, 202)
    assert new.json() == taken.json()
    assert deliver_account_emails() == ["sent", "sent"]
    to_new, to_taken = mailoutbox
    assert to_taken.to == ["ada@example.com"]
    assert "already has an account" in to_taken.body
    assert "/confirm-email?" not in to_taken.body
    assert "/confirm-email?" in to_new.body
    assert get_user_model().objects.count() == 1


def test_a_link_used_after_the_address_got_an_account_says_so(api_client, mailoutbox, deliver_account_emails):
    api_client.post(REGISTER, BODY, format="json")
    api_client.post(REGISTER, {**BODY, "password": "another quiet orbit"}, format="json")
    deliver_account_emails()
    first, second = (_confirm_token(message) for message in mailoutbox)
    assert api_client.post(CONFIRM, {"token": second}, format="json").status_code == 201
    late = api_client.post(CONFIRM, {"token": first}, format="json")
    assert late.status_code == 400
    assert late.json()["error"]["code"] in {"already_registered", "invalid_token"}
    user = get_user_model().objects.get()
    assert user.check_password("another quiet orbit")
    assert not PendingRegistration.objects.exists()


@pytest.mark.parametrize(
    "email",
    [
        "\u017fally@example.org",
        "İnfo@example.org",
        "\u017ftan@example.org",
        "jos\u00e9@example.org",
        "a@localhost",
        "a..b@x.org",
    ],
)
def test_an_address_the_mail_path_cannot_deliver_to_is_a_400(api_client, email):
    response = api_client.post(REGISTER, {**BODY, "email": email}, format="json")
    assert response.status_code == 400, response.json()
    assert list(response.json()["error"]["fields"]) == ["email"]
    assert not PendingRegistration.objects.exists()
    assert not AccountEmail.objects.exists()


def test_an_internationalized_domain_is_stored_as_its_ascii_form_and_mail_goes_there(
    api_client, mailoutbox, deliver_account_emails
):
    assert api_client.post(REGISTER, {**BODY, "email": "Lin@Bücher.Example"}, format="json").status_code == 202
    assert deliver_account_emails() == ["sent"]
    assert mailoutbox[0].to == ["lin@xn--bcher-kva.example"]
    mailoutbox[0].message().as_bytes()


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
    assert not PendingRegistration.objects.exists()


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "utc+2", "localtime", ""])
def test_a_time_zone_that_is_not_an_iana_name_is_a_400(api_client, zone):
    response = api_client.post(REGISTER, {**BODY, "timezone": zone}, format="json")
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["timezone"]
    assert not PendingRegistration.objects.exists()


def test_missing_fields_are_all_named(api_client):
    response = api_client.post(REGISTER, {}, format="json")
    assert response.status_code == 400
    fields = response.json()["error"]["fields"]
    assert fields == {name: ["This field is required."] for name in ("email", "password", "display_name", "timezone")}


@pytest.mark.parametrize("name", ["adm\u202eni", "ad\u200bmin", "\ufeffadmin", "a\u2066dmin\u2069"])
def test_a_display_name_with_invisible_or_direction_characters_is_a_400(api_client, name):
    response = api_client.post(REGISTER, {**BODY, "display_name": name}, format="json")
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["display_name"]
    assert not PendingRegistration.objects.exists()


def test_every_problem_is_reported_at_once_and_nothing_is_created(api_client, learner):
    body = {**BODY, "email": "\u017fally@example.com", "password": "123", "timezone": "Nowhere/Land"}
    response = api_client.post(REGISTER, body, format="json")
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"email", "password", "timezone"}
    assert get_user_model().objects.count() == 1
    assert not PendingRegistration.objects.exists()
