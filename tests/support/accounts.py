"""Signing in as the account tests do."""

from __future__ import annotations

from typing import Any

from rest_framework.test import APIClient

PASSWORD = "correct horse battery"


def login(client: APIClient, email: str, password: str = PASSWORD) -> Any:
    return client.post("/api/v1/auth/login/", {"email": email, "password": password}, format="json")
