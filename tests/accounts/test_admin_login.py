"""The admin's sign-in page is held to the same per-account lockout as the API's sign-in."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/?next=/admin/"


def admin_sign_in(client: Client, password: str):
    return client.post(LOGIN, {"username": "grace", "password": password})


def test_staff_sign_in_to_the_admin(staff_user):
    client = Client()
    assert admin_sign_in(client, "another long passphrase").status_code == 302
    assert client.get("/admin/").status_code == 200


def test_failed_admin_sign_ins_lock_the_account_everywhere(staff_user, api_client):
    client = Client()
    for _ in range(settings.LOGIN_LOCKOUT_FAILURES):
        page = admin_sign_in(client, "wrong guess")
        assert page.status_code == 200 and b"Please enter the correct username" in page.content

    refused = admin_sign_in(client, "another long passphrase")
    assert refused.status_code == 200
    assert b"Too many failed sign-ins" in refused.content
    assert client.get("/admin/").status_code == 302  # still signed out

    token = api_client.post(
        "/api/v1/auth/token/", {"username": "grace", "password": "another long passphrase"}, format="json"
    )
    assert token.status_code == 429 and token.json()["error"]["code"] == "locked_out"


def test_a_lockout_from_the_api_closes_the_admin_too(staff_user, api_client):
    for _ in range(settings.LOGIN_LOCKOUT_FAILURES):
        api_client.post("/api/v1/auth/token/", {"username": "grace", "password": "wrong guess"}, format="json")
    page = admin_sign_in(Client(), "another long passphrase")
    assert b"Too many failed sign-ins" in page.content
