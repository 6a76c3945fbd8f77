"""Fixtures of the web app's browser tests: one Chromium for the session, a page per test."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from django.db import connections

from apps.accounts.devices import device_token_issue
from tests.support.browser import DESKTOP, PHONE, VIEWPORTS, Browsing, Viewport, browsing

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.fixture(scope="session")
def chromium(django_db_setup: None) -> Iterator[Browser]:
    """One browser for the session, started after the test database and stopped before it is dropped.

    While Playwright's loop is on this thread, Django keeps this thread's connections apart from those it had
    before, as it does for async code. Those opened meanwhile are closed before the loop stops: once out of
    sight they would stay open, and the test database could not be dropped."""
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    # Playwright's synchronous API keeps an event loop on this thread between calls, which Django would
    # otherwise take for async code calling the ORM.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            # Chromium's own sandbox needs user namespaces a root CI runner does not give it.
            args = ["--no-sandbox"] if os.geteuid() == 0 else []
            browser = playwright.chromium.launch(executable_path=executable, args=args)
            yield browser
            connections.close_all()
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(params=VIEWPORTS, ids=lambda viewport: viewport.name)
def viewport(request: pytest.FixtureRequest) -> Viewport:
    """Each test that asks for `web` runs at the phone's size and at the desktop's."""
    return request.param


@pytest.fixture
def web(chromium: Browser, live_server: Any, viewport: Viewport) -> Iterator[Browsing]:
    session = browsing(chromium, live_server.url, viewport)
    yield session
    session.close()


@pytest.fixture
def desktop(chromium: Browser, live_server: Any) -> Iterator[Browsing]:
    session = browsing(chromium, live_server.url, DESKTOP)
    yield session
    session.close()


@pytest.fixture
def phone(chromium: Browser, live_server: Any) -> Iterator[Browsing]:
    session = browsing(chromium, live_server.url, PHONE)
    yield session
    session.close()


@pytest.fixture
def token(learner: Any) -> str:
    """The learner's API token, for pages opened already signed in."""
    return device_token_issue(user=learner, device_name=None).key
