"""Fixtures shared by the whole suite: API clients for a learner and for staff, and loaded content."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from rest_framework.test import APIClient

from apps.accounts.devices import device_token_issue

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
    client.credentials(HTTP_AUTHORIZATION=f"Token {device_token_issue(user=learner, device_name=None).key}")
    return client


@pytest.fixture
def deliver_account_emails(db) -> Callable[[], list[str]]:
    """Sends every queued account email as the worker does; returns the statuses, in the order queued.

    Account email leaves the request through an outbox; the tests' broker has no worker to send it."""
    from apps.accounts.mail import account_email_send
    from apps.accounts.models import AccountEmail, AccountEmailStatus

    def deliver() -> list[str]:
        queued = AccountEmail.objects.filter(status=AccountEmailStatus.QUEUED).order_by("pk")
        return [account_email_send(email_id=email_id) for email_id in list(queued.values_list("pk", flat=True))]

    return deliver


@pytest.fixture
def shipped_course(db) -> None:
    """The course that ships in decks/, loaded through the real command."""
    call_command("load_decks", str(DECKS_DIR), stdout=io.StringIO())


@pytest.fixture(autouse=True)
def throttles_start_afresh() -> None:
    """Request rates are counted in the cache, which outlives a test: each test starts with none counted."""
    from apps.common.throttling import throttle_history_clear

    throttle_history_clear()
