"""The daily goal in real Chromium: set on the settings page, counted while studying, met on the home page."""

from __future__ import annotations

from typing import Any

import pytest

from apps.srs.models import SchedulingSettings
from tests.support.browser import Browsing, first_deck, fits_sideways

pytestmark = pytest.mark.django_db(transaction=True)


def _rate_good(web: Browsing) -> None:
    web.page.get_by_role("button", name="Flip", exact=False).wait_for()
    web.page.keyboard.press("Space")
    web.page.get_by_role("button", name="Good", exact=False).wait_for()
    web.page.keyboard.press("3")


def test_a_daily_goal_is_set_counted_while_studying_and_met(
    web: Browsing, shipped_course: None, learner: Any, token: str
) -> None:
    web.sign_in_with_token(token)
    web.goto("/")
    today = web.page.get_by_role("region", name="Today")
    today.wait_for()
    assert "0 reviews today." in today.inner_text()
    today.get_by_role("link", name="Set a daily goal").click()
    web.page.get_by_role("heading", name="Scheduling").wait_for()
    web.page.get_by_label("Daily goal (reviews, 0 for none)").fill("2")
    web.page.get_by_role("button", name="Save scheduling").click()
    web.page.get_by_role("status").filter(has_text="Scheduling settings saved").wait_for()
    assert SchedulingSettings.objects.get(learner=learner).daily_goal == 2

    web.goto(f"/decks/{first_deck().slug}/study")
    line = web.page.locator(".goal-line")
    line.filter(has_text="0 of 2 reviews today, 2 to go.").wait_for()
    _rate_good(web)
    line.filter(has_text="1 of 2 reviews today, 1 to go.").wait_for()
    _rate_good(web)
    line.filter(has_text="Goal met: 2 of 2 reviews today.").wait_for()
    web.page.get_by_role("status").filter(has_text="Daily goal met: 2 reviews today.").wait_for(state="attached")
    # An undo below the goal says so at once.
    web.page.keyboard.press("z")
    line.filter(has_text="1 of 2 reviews today, 1 to go.").wait_for()
    _rate_good(web)
    line.filter(has_text="Goal met").wait_for()

    web.goto("/")
    today.wait_for()
    assert "Goal met: 2 of 2 reviews today. Met 1 day in a row." in today.inner_text()
    bar = today.get_by_role("progressbar", name="Daily goal")
    assert (bar.get_attribute("value"), bar.get_attribute("max")) == ("2", "2")
    web.screenshot("daily-goal")
    assert web.axe_serious() == []
    fits_sideways(web)
    assert web.console_errors == []
