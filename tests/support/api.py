"""Talking to the API as a test does: clients holding a learner's token, and the one error shape."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from apps.accounts.devices import device_token_issue


def assert_error(response: Any, status: int, code: str, fields: set[str] | None = None) -> dict[str, Any]:
    """The response is the API's one JSON error shape with this status and code; returns its `error`."""
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "fields"}, body
    assert body["error"]["code"] == code, body
    assert body["error"]["message"], body
    if fields is not None:
        assert set(body["error"]["fields"]) == fields, body
    error: dict[str, Any] = body["error"]
    return error


def client_with_token(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def client_for(user: Any) -> APIClient:
    """An API client holding a new device token of `user`."""
    return client_with_token(device_token_issue(user=user, device_name=None).key)


def learner_with_token(username: str) -> tuple[Any, str]:
    """Another learner and their API token."""
    user = get_user_model().objects.create_user(username=username, password="a long enough passphrase")
    return user, device_token_issue(user=user, device_name=None).key


def make_learner(username: str) -> tuple[Any, APIClient]:
    """Another learner and an API client signed in as them."""
    user, token = learner_with_token(username)
    return user, client_with_token(token)
