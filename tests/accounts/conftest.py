"""Fixtures for account tests: cache keys of their own, a generous sign-in rate, and helpers."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from rest_framework.test import APIClient

PASSWORD = "correct horse battery"


@pytest.fixture(autouse=True)
def own_cache_keys(settings) -> None:
    """A key prefix of this test's own: throttle counts never leak between tests or test runs.

    The cache may be a Redis shared with other runs, so it is never flushed.
    """
    caches = copy.deepcopy(settings.CACHES)
    default = caches["default"]
    default["KEY_PREFIX"] = f"{default.get('KEY_PREFIX', '')}:accounts-test-{uuid.uuid4().hex}"
    settings.CACHES = caches


@pytest.fixture(autouse=True)
def login_rate(settings) -> None:
    """Sign-in attempts from the test client's one address are not throttled unless a test says so."""
    current = settings.REST_FRAMEWORK
    rates = {**current["DEFAULT_THROTTLE_RATES"], "login_ip": "1000/min", "account_ip": "1000/min"}
    settings.REST_FRAMEWORK = {**current, "DEFAULT_THROTTLE_RATES": rates}


def client_with(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def login(client: APIClient, email: str, password: str = PASSWORD) -> Any:
    return client.post("/api/v1/auth/login/", {"email": email, "password": password}, format="json")
