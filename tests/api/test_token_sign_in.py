"""Signing in through the API hands out a token and nothing else: no session cookie rides along with it."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from rest_framework.test import APIClient

SIGN_INS: dict[str, tuple[str, dict[str, Any], int]] = {
    "login": ("/api/v1/auth/login/", {"email": "ada@example.com", "password": "correct horse battery"}, 200),
    "token": ("/api/v1/auth/token/", {"username": "ada", "password": "correct horse battery"}, 200),
}


@pytest.mark.parametrize("name", SIGN_INS)
def test_an_api_sign_in_starts_no_session(api_client: APIClient, learner: Any, name: str) -> None:
    # A session cookie would sign the client in beside its token, so dropping or revoking the token
    # would not sign it out.
    path, body, expected = SIGN_INS[name]

    response = api_client.post(path, body, format="json")

    assert response.status_code == expected, response.content
    assert response.json()["token"]
    assert settings.SESSION_COOKIE_NAME not in response.cookies
    assert not Session.objects.exists()


def test_a_revoked_token_is_refused_even_by_a_client_keeping_its_cookies(api_client: APIClient, learner: Any) -> None:
    token = api_client.post("/api/v1/auth/login/", SIGN_INS["login"][1], format="json").json()["token"]
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert api_client.get("/api/v1/me/").status_code == 200

    api_client.credentials(HTTP_AUTHORIZATION="Token 0000000000000000000000000000000000000000")

    assert api_client.get("/api/v1/me/").status_code == 401
