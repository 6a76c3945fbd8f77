"""API tokens for mobile clients, and session sign-in for the web."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def test_token_for_valid_credentials_authenticates(api_client, learner):
    response = api_client.post(
        "/api/v1/auth/token/", {"username": "ada", "password": "correct horse battery"}, format="json"
    )
    assert response.status_code == 200
    token = response.json()["token"]
    # Each sign-in is a device of its own.
    again = api_client.post(
        "/api/v1/auth/token/", {"username": "ada", "password": "correct horse battery"}, format="json"
    )
    assert again.json()["token"] != token
    for key in (token, again.json()["token"]):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        assert client.get("/api/v1/courses/").status_code == 200


def test_wrong_password_is_refused_without_saying_which_part(api_client, learner):
    response = api_client.post("/api/v1/auth/token/", {"username": "ada", "password": "wrong"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_credentials"
    unknown = api_client.post("/api/v1/auth/token/", {"username": "nobody", "password": "wrong"}, format="json")
    assert unknown.json() == response.json()


def test_inactive_user_gets_no_token(api_client, learner):
    learner.is_active = False
    learner.save()
    response = api_client.post(
        "/api/v1/auth/token/", {"username": "ada", "password": "correct horse battery"}, format="json"
    )
    assert response.status_code == 400


def test_session_authentication_for_the_web(client, learner):
    client.force_login(learner)
    assert client.get("/api/v1/courses/").status_code == 200


def test_demo_accounts_command_prints_working_credentials(api_client, settings):
    import io

    from django.core.management import call_command

    settings.DEBUG = True
    out = io.StringIO()
    call_command("demo_accounts", stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    for line in lines:
        fields = line.split()
        username = fields[fields.index("username:") + 1]
        password = fields[fields.index("password:") + 1]
        response = api_client.post("/api/v1/auth/token/", {"username": username, "password": password}, format="json")
        assert response.status_code == 200
        # The web app signs in by email.
        email = fields[fields.index("email:") + 1]
        response = api_client.post("/api/v1/auth/login/", {"email": email, "password": password}, format="json")
        assert response.status_code == 200


def test_demo_accounts_refuse_production(settings):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    settings.DEBUG = False
    with pytest.raises(CommandError, match="DEBUG is off"):
        call_command("demo_accounts")
