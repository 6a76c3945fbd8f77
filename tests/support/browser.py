"""Real Chromium against a live server, for the web app's end-to-end tests.

The server is pytest-django's live server on the test database (PostgreSQL in CI), serving the app's
committed bundle; the browser is Debian's `chromium` driven by Playwright. Tests that use these
fixtures are skipped where Chromium is not installed; CI installs it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

from apps.content.models import Deck

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Locator, Page

TOKEN_STORAGE_KEY = "quizsite.token"
SCREENSHOTS_DIR = Path(settings.VAR_DIR) / "screenshots"


@dataclass(frozen=True)
class Viewport:
    name: str
    width: int
    height: int


PHONE = Viewport("phone", 390, 844)
DESKTOP = Viewport("desktop", 1280, 800)
VIEWPORTS = (PHONE, DESKTOP)


@dataclass
class Browsing:
    """A browser context on the live server at one viewport size, with the page's console errors kept."""

    context: BrowserContext
    page: Page
    base_url: str
    viewport: Viewport
    console_errors: list[str]
    # API requests the page sent whose answer has not come yet.
    in_flight: set[Any]

    def close(self, *, settle_seconds: float = 3.0) -> None:
        """Close the context once the API has answered what the page asked: the test database is flushed next,
        and a query still running on the live server then would deadlock with it."""
        deadline = time.monotonic() + settle_seconds
        while self.in_flight and time.monotonic() < deadline:
            self.page.wait_for_timeout(20)
        self.context.close()
        # A request the page sent as it was closed may still be running on the server (the browser no
        # longer waits for it): the flush waits for the database to have no other query under way.
        database_settles()

    def goto(self, path: str, *, usable: Locator | None = None) -> float:
        """Opens `path`; returns the seconds from navigation until `usable` (else the `main` landmark) is visible."""
        started = time.perf_counter()
        self.page.goto(self.base_url + path)
        (usable or self.page.locator("main").first).wait_for(state="visible")
        return time.perf_counter() - started

    def sign_in_with_token(self, key: str) -> None:
        """Signs in as a token's learner without the sign-in form (the form has its own test)."""
        self.page.goto(self.base_url + "/signin")
        self.page.evaluate("([name, key]) => localStorage.setItem(name, key)", [TOKEN_STORAGE_KEY, key])

    def screenshot(self, name: str) -> Path:
        SCREENSHOTS_DIR.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS_DIR / f"{name}-{self.viewport.name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def scroll_width(self) -> int:
        """The page's whole width: more than the viewport's means it scrolls sideways."""
        width: int = self.page.evaluate("document.documentElement.scrollWidth")
        return width

    def timing_record(self, what: str, seconds: float) -> None:
        """Keeps a measured time in var/screenshots/timings.json, reported by the suite, never asserted."""
        SCREENSHOTS_DIR.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS_DIR / "timings.json"
        timings = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        timings[f"{what} ({self.viewport.name})"] = round(seconds, 3)
        path.write_text(json.dumps(timings, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    def axe_serious(self) -> list[dict[str, Any]]:
        """axe-core's serious and critical violations on the page as it is now."""
        from axe_playwright_python.sync_playwright import Axe

        results = Axe().run(self.page)
        return [
            {"id": violation["id"], "impact": violation["impact"], "nodes": len(violation["nodes"])}
            for violation in results.response["violations"]
            if violation["impact"] in ("serious", "critical")
        ]


def browsing(browser: Browser, base_url: str, viewport: Viewport, **context_options: Any) -> Browsing:
    """A new context: `context_options` are Playwright's (a time zone, reduced motion, ...)."""
    # The app's Content-Security-Policy stays on: a violation shows as a console error.
    context = browser.new_context(viewport={"width": viewport.width, "height": viewport.height}, **context_options)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    in_flight: set[Any] = set()
    context.on("request", lambda request: in_flight.add(request) if "/api/" in request.url else None)
    context.on("requestfinished", lambda request: in_flight.discard(request))
    context.on("requestfailed", lambda request: in_flight.discard(request))
    return Browsing(
        context=context, page=page, base_url=base_url, viewport=viewport, console_errors=errors, in_flight=in_flight
    )


def fits_sideways(web: Browsing) -> None:
    assert web.scroll_width() <= web.viewport.width, f"{web.scroll_width()} px wide at {web.viewport.name} size"


def no_raw_json(web: Browsing) -> None:
    """The page shows no error body as the API sent it: errors are said in words."""
    body = web.page.locator("body").inner_text()
    assert '{"error"' not in body and '"code":' not in body, body[:500]


def left_for_plain_sign_in(web: Browsing, farewell: str) -> None:
    """After leaving on purpose: the sign-in page says `farewell`, and its address sends whoever signs in next home.

    A `next` there would take the next person to sign in on this device to the page the last one left."""
    web.page.get_by_role("status").filter(has_text=farewell).wait_for()
    assert web.page.url == web.base_url + "/signin", web.page.url


def first_deck() -> Deck:
    """The shipped course's first deck in lesson order."""
    return Deck.objects.filter(archived=False).order_by("lesson__position", "position")[0]


def database_settles(seconds: float = 10.0) -> None:
    """Wait until no other session on the test database is running a query or holds a transaction open."""
    from django.db import connection

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')"
            )
            (busy,) = cursor.fetchone()
        if not busy:
            return
        time.sleep(0.02)
