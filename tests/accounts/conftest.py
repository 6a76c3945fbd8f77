"""Fixtures for account tests: cache keys of their own and a generous sign-in rate."""

from __future__ import annotations

import copy
import uuid

import pytest


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
