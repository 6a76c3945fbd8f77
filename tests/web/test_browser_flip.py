"""Flipping a card in real Chromium: the answer turns over into view, unless the system asks for reduced motion."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.support.browser import DESKTOP, PHONE, browsing, first_deck

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.django_db(transaction=True)

ANIMATION = "getComputedStyle(document.querySelector('.flashcard .card-face.back')).animationName"
TRANSFORM = "getComputedStyle(document.querySelector('.flashcard .card-face.back')).transform"


@pytest.mark.parametrize(("motion", "animation"), [("no-preference", "card-turn"), ("reduce", "none")])
def test_the_answer_turns_over_unless_motion_is_reduced(
    chromium: Browser, live_server: Any, shipped_course: None, token: str, motion: str, animation: str
) -> None:
    for viewport in (PHONE, DESKTOP):
        web = browsing(chromium, live_server.url, viewport, reduced_motion=motion)
        try:
            web.sign_in_with_token(token)
            web.goto(f"/decks/{first_deck().slug}/study")
            web.page.get_by_role("button", name="Flip", exact=False).click()
            web.page.get_by_label("Answer").wait_for()
            assert web.page.evaluate(ANIMATION) == animation
            # Turned over or not, the answer ends flat and still.
            web.page.wait_for_function("() => document.getAnimations().length === 0")
            assert web.page.evaluate(TRANSFORM) == "none"
        finally:
            web.close()
