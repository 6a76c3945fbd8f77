"""Fixtures shared by the whole suite: API clients for a learner and for staff, and loaded content."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

REPO_ROOT = Path(__file__).resolve().parent.parent
DECKS_DIR = REPO_ROOT / "decks"
FIXTURES_DIR = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def learner(db):
    return get_user_model().objects.create_user(
        username="ada", password="correct horse battery", email="ada@example.com"
    )


@pytest.fixture
def staff_user(db):
    return get_user_model().objects.create_user(
        username="grace", password="another long passphrase", is_staff=True, is_superuser=True
    )


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def learner_client(learner) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=learner).key}")
    return client


@pytest.fixture
def shipped_course(db) -> None:
    """The course that ships in decks/, loaded through the real command."""
    call_command("load_decks", str(DECKS_DIR), stdout=io.StringIO())


@pytest.fixture(autouse=True)
def throttles_start_afresh() -> None:
    """Request rates are counted in the cache, which outlives a test: each test starts with none counted."""
    from apps.common.throttling import throttle_history_clear

    throttle_history_clear()
