"""Changing a password, and resetting a forgotten one by email."""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core import mail

from apps.accounts.devices import device_token_issue
from apps.accounts.lockout import login_failure_record, login_locked_for
from apps.accounts.models import AccountEmail, LearnerProfile
from tests.support.accounts import PASSWORD, login
from tests.support.api import client_with_token

pytestmark = pytest.mark.django_db

CHANGE = "/api/v1/auth/password/change/"
RESET = "/api/v1/auth/password/reset/"
CONFIRM = "/api/v1/auth/password/reset/confirm/"
NEW_PASSWORD = "lanterns over a frozen lake"


def test_changing_the_password_signs_out_every_device_and_gives_this_one_a_new_token(learner, api_client):
    phone = client_with_token(device_token_issue(user=learner, device_name="Phone").key)
    tablet = client_with_token(device_token_issue(user=learner, device_name="Tablet").key)
    response = phone.post(CHANGE, {"current_password": PASSWORD, "new_password": NEW_PASSWORD}, format="json")
    assert response.status_code == 200, response.json()
    new_token = response.json()["token"]
    assert phone.get("/api/v1/me/").status_code == 401
    assert tablet.get("/api/v1/me/").status_code == 401
    devices = client_with_token(new_token).get("/api/v1/auth/devices/").json()
    assert [device["name"] for device in devices] == ["Phone"]
    assert client_with_token(new_token).get("/api/v1/me/").status_code == 200
    assert login(api_client, "ada@example.com", PASSWORD).status_code == 400
    assert login(api_client, "ada@example.com", NEW_PASSWORD).status_code == 200


def test_a_wrong_current_password_changes_nothing(learner, learner_client):
    response = learner_client.post(CHANGE, {"current_password": "not it", "new_password": NEW_PASSWORD}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"current_password": ["The current password is wrong."]}
    learner.refresh_from_db()
    assert learner.check_password(PASSWORD)
    assert learner_client.get("/api/v1/me/").status_code == 200


def test_a_weak_new_password_is_refused(learner, learner_client):
    response = learner_client.post(CHANGE, {"current_password": PASSWORD, "new_password": "ada12"}, format="json")
    assert response.status_code == 400
    fields = response.json()["error"]["fields"]
    assert list(fields) == ["new_password"]
    assert "This password is too short. It must contain at least 8 characters." in fields["new_password"]
    learner.refresh_from_db()
    assert learner.check_password(PASSWORD)


def test_changing_the_password_needs_a_sign_in(api_client):
    response = api_client.post(CHANGE, {"current_password": "a", "new_password": NEW_PASSWORD}, format="json")
    assert response.status_code == 401


def reset_link(message: mail.EmailMessage) -> str:
    [link] = re.findall(r"https?://\S+/reset-password\?\S+", str(message.body))
    return link


def test_reset_end_to_end_from_the_emailed_link(learner, learner_client, api_client, settings, deliver_account_emails):
    assert settings.PASSWORD_RESET_TIMEOUT == 3600
    settings.FRONTEND_URL = "https://study.example.org"
    mail.outbox.clear()
    response = api_client.post(RESET, {"email": " ADA@example.com"}, format="json")
    assert response.status_code == 202
    # Sent by a worker, never inside the request.
    assert mail.outbox == []
    assert deliver_account_emails() == ["sent"]
    [message] = mail.outbox
    assert message.to == ["ada@example.com"]
    link = reset_link(message)
    assert link.startswith("https://study.example.org/reset-password?uid=")
    assert isinstance(message, mail.EmailMultiAlternatives)
    [(html, mimetype)] = message.alternatives
    assert mimetype == "text/html"
    assert link.replace("&", "&amp;") in str(html)
    query = parse_qs(urlsplit(link).query)
    body = {"uid": query["uid"][0], "token": query["token"][0], "new_password": NEW_PASSWORD}

    confirmed = api_client.post(CONFIRM, body, format="json")
    assert confirmed.status_code == 200, confirmed.json()
    token = confirmed.json()["token"]
    assert client_with_token(token).get("/api/v1/me/").json()["username"] == "ada"
    # The token from before the reset is signed out.
    assert learner_client.get("/api/v1/me/").status_code == 401
    assert login(api_client, "ada@example.com", NEW_PASSWORD).status_code == 200

    # The link worked once: the token covers the password it replaced.
    again = api_client.post(CONFIRM, {**body, "new_password": "yet another fine passphrase"}, format="json")
    assert again.status_code == 400
    assert again.json()["error"]["code"] == "invalid_token"
    learner.refresh_from_db()
    assert learner.check_password(NEW_PASSWORD)


def test_an_unknown_email_gets_the_same_answer_the_same_work_and_no_email(
    learner, api_client, deliver_account_emails, django_assert_num_queries
):
    mail.outbox.clear()
    known = api_client.post(RESET, {"email": "ada@example.com"}, format="json")
    with django_assert_num_queries(1):
        unknown = api_client.post(RESET, {"email": "nobody@example.com"}, format="json")
    assert known.status_code == unknown.status_code == 202
    assert known.json() == unknown.json()
    assert "Check your inbox" in known.json()["detail"]
    assert list(AccountEmail.objects.values_list("to", flat=True)) == ["ada@example.com", "nobody@example.com"]
    assert deliver_account_emails() == ["sent", "not_sent"]
    assert len(mail.outbox) == 1


@pytest.mark.parametrize("email", ["\u017fally@example.org", "İnfo@example.org", "not an email", "a@" + "b" * 300])
def test_a_reset_for_an_address_no_mail_can_reach_is_the_same_202(learner, api_client, email, deliver_account_emails):
    response = api_client.post(RESET, {"email": email}, format="json")
    assert response.status_code in {202, 400}, response.content
    if response.status_code == 202:
        assert deliver_account_emails() == ["not_sent"]


def test_inactive_accounts_get_no_reset_email(learner, api_client, deliver_account_emails):
    learner.is_active = False
    learner.save()
    mail.outbox.clear()
    assert api_client.post(RESET, {"email": "ada@example.com"}, format="json").status_code == 202
    assert deliver_account_emails() == ["not_sent"]
    assert mail.outbox == []


def requested_reset(api_client) -> dict[str, str]:
    from apps.accounts.mail import account_email_send

    mail.outbox.clear()
    api_client.post(RESET, {"email": "ada@example.com"}, format="json")
    account_email_send(email_id=AccountEmail.objects.latest("pk").pk)
    query = parse_qs(urlsplit(reset_link(mail.outbox[-1])).query)
    return {"uid": query["uid"][0], "token": query["token"][0], "new_password": NEW_PASSWORD}


@pytest.mark.parametrize(
    "tamper",
    [
        {"token": "abc-123"},
        {"uid": "MTIzNDU2Nzg"},
        {"uid": "!!not base64!!"},
        {"uid": "OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5"},
    ],
    ids=["bad token", "other uid", "garbage uid", "huge uid"],
)
def test_a_bad_link_is_invalid_token(learner, api_client, tamper):
    response = api_client.post(CONFIRM, {**requested_reset(api_client), **tamper}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_token"
    learner.refresh_from_db()
    assert learner.check_password(PASSWORD)


def test_an_expired_link_is_invalid_token(learner, api_client, monkeypatch):
    body = requested_reset(api_client)
    later = PasswordResetTokenGenerator._now(PasswordResetTokenGenerator()) + timedelta(seconds=3601)
    monkeypatch.setattr(PasswordResetTokenGenerator, "_now", lambda self: later)
    response = api_client.post(CONFIRM, body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_token"


def test_a_weak_password_keeps_the_link_usable(learner, api_client):
    body = requested_reset(api_client)
    weak = api_client.post(CONFIRM, {**body, "new_password": "12345678"}, format="json")
    assert weak.status_code == 400
    assert weak.json()["error"]["code"] == "invalid"
    assert list(weak.json()["error"]["fields"]) == ["new_password"]
    assert api_client.post(CONFIRM, body, format="json").status_code == 200


def test_a_reset_lifts_a_lockout(learner, api_client, settings):
    settings.LOGIN_LOCKOUT_FAILURES = 1
    login_failure_record(email="ada@example.com", address="127.0.0.1")
    assert login_locked_for(email="ada@example.com", address="127.0.0.1") > 0
    assert api_client.post(CONFIRM, requested_reset(api_client), format="json").status_code == 200
    assert login(api_client, "ada@example.com", NEW_PASSWORD).status_code == 200


@pytest.mark.parametrize(
    ("username", "display_name", "greeting"),
    [
        ("ada@example.com", "", "Hello,\n"),
        ("ada@example.com", "Ada L.", "Hello Ada L.,\n"),
        ("ada", "", "Hello ada,\n"),
    ],
)
def test_the_reset_email_greets_by_name_never_by_address(
    api_client, deliver_account_emails, username, display_name, greeting
):
    user = get_user_model().objects.create_user(username=username, email="ada@example.com", password=NEW_PASSWORD)
    if display_name:
        LearnerProfile.objects.create(learner=user, display_name=display_name)
    mail.outbox.clear()
    assert api_client.post(RESET, {"email": "ada@example.com"}, format="json").status_code == 202
    assert deliver_account_emails() == ["sent"]
    [message] = mail.outbox
    assert message.body.startswith(greeting), message.body[:80]
    assert isinstance(message, mail.EmailMultiAlternatives)
    [(html, _)] = message.alternatives
    assert f"<p>{greeting.strip()}</p>" in str(html)
