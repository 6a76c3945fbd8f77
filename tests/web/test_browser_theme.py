"""Dark mode in real Chromium: it follows the system, a choice on the settings page overrides it, and
every page keeps axe-core's contrast checks in it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from apps.content.models import Quiz
from apps.exercises.models import PipelineExercise
from tests.support.browser import DESKTOP, PHONE, Browsing, browsing, first_deck

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.django_db(transaction=True)

LESSON = "data-pipelines-tf-data"


def _luminance(web: Browsing, selector: str, property_name: str = "backgroundColor") -> float:
    """The relative luminance (WCAG) of an element's computed colour, 0 black to 1 white."""
    channels: list[float] = web.page.evaluate(
        """([selector, property]) => {
            const probe = document.createElement("canvas").getContext("2d");
            probe.fillStyle = getComputedStyle(document.querySelector(selector))[property];
            probe.fillRect(0, 0, 1, 1);
            return Array.from(probe.getImageData(0, 0, 1, 1).data.slice(0, 3), (value) => value / 255);
        }""",
        [selector, property_name],
    )
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _keyword_colour(web: Browsing) -> str:
    """The colour of the first `def` in the code editor, inside its shadow root."""
    colour: str = web.page.evaluate(
        """() => {
            const host = document.querySelector(".exercise-editor");
            const spans = [...host.shadowRoot.querySelectorAll(".cm-content span")];
            return getComputedStyle(spans.find((node) => node.textContent === "def")).color;
        }"""
    )
    return colour


def _dark(chromium: Browser, base_url: str, phone: bool = False) -> Browsing:
    return browsing(chromium, base_url, PHONE if phone else DESKTOP, color_scheme="dark")


def test_a_dark_system_gets_dark_pages_that_pass_the_contrast_checks(
    chromium: Browser, live_server: Any, shipped_course: None, token: str
) -> None:
    web = _dark(chromium, live_server.url)
    try:
        web.sign_in_with_token(token)
        deck = first_deck()
        exercise = PipelineExercise.objects.order_by("position")[0]
        quiz = Quiz.objects.order_by("pk")[0]
        pages = {
            "/": "h1",
            "/study": "h1",
            f"/decks/{deck.slug}/study": ".flashcard",
            f"/lessons/{LESSON}": "h1",
            f"/exercises/{exercise.slug}": ".cm-content",
            f"/quizzes/{quiz.slug}": "h1",
            "/settings": "#appearance-title",
        }
        for path, ready in pages.items():
            web.goto(path, usable=web.page.locator(ready).first)
            assert _luminance(web, "body") < 0.02, path
            assert _luminance(web, "body", "color") > 0.7, path
            assert web.axe_serious() == [], path
            web.screenshot("dark" + (path.rstrip("/").replace("/", "-") or "-home"))
            if path.startswith("/exercises/"):
                assert _keyword_colour(web) == "rgb(216, 168, 255)"
        assert web.console_errors == []
    finally:
        web.close()


def test_the_progress_charts_are_drawn_in_the_dark_themes_colours(
    chromium: Browser, live_server: Any, shipped_course: None, token: str
) -> None:
    web = _dark(chromium, live_server.url, phone=True)
    try:
        web.sign_in_with_token(token)
        web.goto(f"/decks/{first_deck().slug}/study", usable=web.page.get_by_role("button", name="Flip", exact=False))
        web.page.keyboard.press("Space")
        web.page.get_by_role("button", name="Good", exact=False).wait_for()
        with web.page.expect_response(lambda response: response.url.endswith("/api/v1/reviews/")) as posted:
            web.page.keyboard.press("3")
        assert posted.value.status == 201
        web.goto("/progress", usable=web.page.locator(".plot-box canvas").first)
        # The bars are drawn in the dark theme's blue (#8db4ff), not the light theme's (#1d4ed8).
        counts = web.page.evaluate(
            """() => {
                const canvas = document.querySelector(".plot-box canvas");
                const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
                const near = (i, [r, g, b]) =>
                    Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b) < 24;
                let dark = 0, light = 0;
                for (let i = 0; i < data.length; i += 4) {
                    if (data[i + 3] < 250) continue;
                    if (near(i, [141, 180, 255])) dark += 1;
                    if (near(i, [29, 78, 216])) light += 1;
                }
                return { dark, light };
            }"""
        )
        assert counts["dark"] > 50 and counts["light"] == 0, counts
        assert web.axe_serious() == []
        assert web.console_errors == []
    finally:
        web.close()


def test_a_theme_chosen_in_settings_overrides_the_system_and_stays_after_a_reload(
    chromium: Browser, live_server: Any, shipped_course: None, token: str
) -> None:
    # No service worker: it would serve the app's script from its copy, past the route that blocks it below.
    web = browsing(chromium, live_server.url, DESKTOP, service_workers="block")
    try:
        _theme_chosen_in_settings(web, token)
    finally:
        web.close()


def _theme_chosen_in_settings(web: Browsing, token: str) -> None:
    web.sign_in_with_token(token)
    web.goto("/settings", usable=web.page.get_by_role("radio", name="Dark"))
    assert _luminance(web, "body") > 0.8
    assert web.page.get_by_role("radio", name="As this device is set").is_checked()
    assert "This device is set to light" in web.page.locator("#appearance-title ~ .hint").inner_text()

    web.page.get_by_role("radio", name="Dark").check()
    assert web.page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert _luminance(web, "body") < 0.02
    assert web.page.locator("#appearance-title ~ .hint").inner_text() == "The app is dark on this device."
    assert web.axe_serious() == []

    # The choice is on the page before the app's script runs (the shell's first script applies it).
    web.page.route("**/static/web/app.js", lambda route: route.abort())
    web.page.reload()
    web.page.wait_for_load_state("domcontentloaded")
    assert web.page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert _luminance(web, "body") < 0.02
    web.page.unroute("**/static/web/app.js")

    web.goto("/settings", usable=web.page.get_by_role("radio", name="Dark"))
    assert web.page.get_by_role("radio", name="Dark").is_checked()
    web.page.get_by_role("radio", name="As this device is set").check()
    assert web.page.evaluate("'theme' in document.documentElement.dataset") is False
    assert _luminance(web, "body") > 0.8
    # The console errors of the aborted script load are the test's own doing.
    assert [error for error in web.console_errors if "app.js" not in error and "net::" not in error] == []
