"""Settings, progress and the study overview in real Chromium: what the pages show and what the database holds."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from django.utils import timezone

from apps.accounts.models import LearnerProfile
from apps.content.models import Deck
from apps.reminders.models import ReminderPreference
from apps.srs.models import CourseMemoryModel, LearnerMemoryModel, SchedulingSettings
from apps.srs.reviews.services import ReviewInput, reviews_submit
from tests.support.browser import (
    DESKTOP,
    Browsing,
    browsing,
    first_deck,
    fits_sideways,
    left_for_plain_sign_in,
    no_raw_json,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def desktop_in_paris(chromium: Browser, live_server: Any) -> Iterator[Browsing]:
    """A desktop browser whose own time zone is Paris's, as a learner's laptop would say."""
    session = browsing(chromium, live_server.url, DESKTOP, timezone_id="Europe/Paris")
    yield session
    session.close()


def _review_some_cards(learner: Any, deck: Deck) -> int:
    """Reviews spread over the past fortnight, through the same service the API uses; returns how many."""
    now = timezone.now()
    cards = list(deck.cards.filter(archived=False).order_by("position")[:4])
    reviews = [
        ReviewInput(
            card_id=card.pk,
            rating=rating,
            client_review_id=uuid.uuid4(),
            reviewed_at=now - timedelta(days=days_ago, minutes=index),
            duration_ms=6000,
        )
        for days_ago, rating in ((14, 3), (9, 3), (2, 1))
        for index, card in enumerate(cards)
    ]
    reviews_submit(learner=learner, reviews=reviews, now=now)
    return len(reviews)


def test_settings_are_saved_to_the_account(desktop_in_paris: Browsing, learner: Any, token: str) -> None:
    desktop = desktop_in_paris
    desktop.sign_in_with_token(token)
    desktop.goto("/settings")
    page = desktop.page
    page.get_by_role("heading", name="Scheduling").wait_for()
    # Never saved, the zone starts as the browser's, and says it is not stored yet.
    assert page.get_by_label("Time zone").input_value() == "Europe/Paris"
    assert "browser" in page.locator("#timezone-hint").inner_text()

    page.get_by_label("Time zone").fill("Asia/Tokyo")
    page.get_by_label("Desired retention").fill("0.85")
    page.get_by_role("button", name="Save scheduling").click()
    page.get_by_role("status").filter(has_text="Scheduling settings saved").wait_for()
    settings = SchedulingSettings.objects.get(learner=learner)
    assert settings.timezone == "Asia/Tokyo"
    assert settings.desired_retention == pytest.approx(0.85)
    # Reminders follow the zone just saved, without a reload.
    page.get_by_text("In your time zone (Asia/Tokyo).").wait_for()

    page.get_by_label("Display name").fill("Ada L.")
    page.get_by_role("button", name="Save profile").click()
    page.get_by_role("status").filter(has_text="Profile saved").wait_for()
    assert LearnerProfile.objects.get(learner=learner).display_name == "Ada L."
    # The header follows the new name.
    page.locator(".who").filter(has_text="Ada L.").wait_for()

    page.get_by_label("Email me when cards are due").check()
    page.get_by_label("Send it at").select_option("7")
    page.get_by_role("button", name="Save reminders").click()
    page.get_by_role("status").filter(has_text="07:00").wait_for()
    reminders = ReminderPreference.objects.get(learner=learner)
    assert reminders.enabled and reminders.local_hour == 7

    # A reload shows what was stored.
    desktop.goto("/settings")
    assert page.get_by_label("Time zone").input_value() == "Asia/Tokyo"
    assert page.get_by_label("Desired retention").input_value() == "0.85"
    assert desktop.console_errors == []


def test_a_bad_value_is_refused_in_words(desktop: Browsing, learner: Any, token: str) -> None:
    desktop.sign_in_with_token(token)
    desktop.goto("/settings")
    page = desktop.page
    page.get_by_label("Desired retention").fill("1.5")
    page.get_by_label("Time zone").fill("Mars/Olympus_Mons")
    page.get_by_role("button", name="Save scheduling").click()
    page.get_by_role("alert").first.wait_for()
    retention = page.locator("#desired_retention-errors")
    retention.wait_for()
    assert "0.99" in retention.inner_text()
    assert page.get_by_label("Desired retention").get_attribute("aria-invalid") == "true"
    assert page.locator("#timezone-errors").inner_text().strip()
    # The banner points to the marked fields; it does not repeat them in the API's field names.
    banner = page.locator("section[aria-labelledby=scheduling-title] .alert-error").inner_text()
    assert "please correct the 2 fields marked below" in banner
    assert "desired_retention" not in banner and "timezone:" not in banner
    no_raw_json(desktop)
    # All or nothing: neither value was stored.
    assert not SchedulingSettings.objects.filter(learner=learner).exists()


def test_the_three_pages_for_a_learner_with_reviews(
    web: Browsing, shipped_course: None, learner: Any, token: str
) -> None:
    deck = first_deck()
    _review_some_cards(learner, deck)
    web.sign_in_with_token(token)
    page = web.page

    web.goto("/progress")
    page.get_by_role("img", name="Reviews per day", exact=False).wait_for()
    page.locator(".plot-box canvas").first.wait_for()
    # The forecast and retention plots are uPlot canvases; the calendar and the mastery bars are SVG.
    assert page.locator(".plot-box canvas").count() >= 2
    assert page.locator("svg.heatmap-svg rect.heat-0").count() > 0
    assert page.locator("svg.heatmap-svg rect:not(.heat-0)").count() >= 3
    assert page.get_by_role("img", name="Mastery per deck", exact=False).count() == 1
    assert page.get_by_role("img", name="Reviews due per day", exact=False).count() == 1
    web.screenshot("account-progress")
    assert web.axe_serious() == []
    fits_sideways(web)

    web.goto("/settings")
    page.get_by_role("heading", name="Scheduling").wait_for()
    web.screenshot("account-settings")
    assert web.axe_serious() == []
    fits_sideways(web)

    web.goto("/study")
    row = page.locator(".deck-due").filter(has=page.get_by_role("heading", name=deck.title, exact=True))
    row.wait_for()
    assert row.locator(".count-number").count() == 3
    assert "to study now" in page.locator(".due-total").inner_text()
    web.screenshot("account-study")
    assert web.axe_serious() == []
    fits_sideways(web)
    assert row.get_by_role("link", name="Match", exact=False).get_attribute("href") == f"/decks/{deck.slug}/match"
    row.get_by_role("link", name="Study", exact=False).click()
    page.wait_for_url(f"**/decks/{deck.slug}/study")
    page.get_by_role("button", name="Flip", exact=False).wait_for()
    no_raw_json(web)
    assert web.console_errors == []


def test_progress_for_a_new_learner_says_there_is_nothing_yet(
    desktop: Browsing, shipped_course: None, token: str
) -> None:
    desktop.sign_in_with_token(token)
    desktop.goto("/progress")
    desktop.page.get_by_role("heading", name="Nothing to show yet").wait_for()
    assert "No reviews in the past year yet" in desktop.page.locator("main").inner_text()
    assert desktop.page.locator(".plot-box canvas").count() == 0
    assert desktop.console_errors == []


def test_deleting_the_account_asks_for_the_password_first(desktop: Browsing, learner: Any, token: str) -> None:
    from playwright.sync_api import expect

    desktop.sign_in_with_token(token)
    desktop.goto("/settings")
    page = desktop.page
    page.get_by_role("button", name="Delete my account…").click()
    # The keyboard goes to the password the form asks for.
    expect(page.get_by_label("Your password, to confirm")).to_be_focused()
    page.get_by_label("Your password, to confirm").fill("not the password")
    page.get_by_role("button", name="Delete my account for good").click()
    page.locator("#delete_password-errors").wait_for()
    no_raw_json(desktop)
    assert type(learner).objects.filter(pk=learner.pk).exists()
    page.get_by_label("Your password, to confirm").fill("correct horse battery")
    page.get_by_role("button", name="Delete my account for good").click()
    left_for_plain_sign_in(desktop, "Your account was deleted, with everything it held.")
    assert not type(learner).objects.filter(pk=learner.pk).exists()


def test_the_learner_sees_their_devices_and_signs_one_out_then_all(web: Browsing, learner: Any) -> None:
    from playwright.sync_api import expect

    from apps.accounts.devices import device_token_issue
    from apps.accounts.models import DeviceToken

    here = device_token_issue(user=learner, device_name="This laptop")
    phone = device_token_issue(user=learner, device_name="Pixel 8")
    web.sign_in_with_token(here.key)
    web.goto("/settings")
    page = web.page
    page.get_by_role("heading", name="Signed-in devices").wait_for()
    devices = page.locator(".device-list li")
    expect_names = {"This laptop (this device)", "Pixel 8"}
    page.get_by_text("Pixel 8").first.wait_for()
    shown = {item.inner_text().split("\n")[0].strip() for item in devices.all()}
    assert shown == expect_names, shown
    web.screenshot("settings-devices")
    assert web.axe_serious() == []
    page.get_by_role("button", name="Sign out Pixel 8").click()
    page.get_by_role("status").filter(has_text="Pixel 8 is signed out").wait_for()
    # The list reloads after the sign-out; clicking while it shrinks would land on a moving target.
    expect(devices).to_have_count(1)
    assert not DeviceToken.objects.filter(pk=phone.device.pk).exists()
    assert DeviceToken.objects.filter(pk=here.device.pk).exists()
    page.get_by_role("button", name="Sign out everywhere").click()
    left_for_plain_sign_in(web, "Every device is signed out.")
    assert not DeviceToken.objects.filter(user=learner).exists()
    assert web.console_errors == []


def test_the_settings_say_which_memory_model_schedules_the_learners_cards(
    desktop: Browsing, shipped_course: None, learner: Any, token: str
) -> None:
    deck = first_deck()
    course = deck.lesson.course
    model = CourseMemoryModel.objects.create(
        course=course, status="done", parameters=[0.5] * 21, card_factors={}, learners=37, adopted=True,
        finished_at=timezone.now(), log_loss=0.31, previous_log_loss=0.33,
    )  # fmt: skip
    desktop.sign_in_with_token(token)
    desktop.goto("/settings")
    page = desktop.page
    page.get_by_role("heading", name="Memory model").wait_for()
    # A learner who began after the training follows the course's model, and is told so, and why.
    shown = page.locator(".course-models li").first
    shown.wait_for()
    text = shown.inner_text()
    assert f"Your cards of {course.title} are scheduled with the model learned from the reviews of 37" in text
    assert "began after" in text
    assert "the default model is in use" not in page.locator(".optimize").inner_text()

    LearnerMemoryModel.objects.create(
        memory_model=model, learner=learner, uses_course_model=False, evaluated_on_reviews=80, log_loss=0.35,
        previous_log_loss=0.30,
    )  # fmt: skip
    desktop.goto("/settings")
    page.get_by_role("heading", name="Memory model").wait_for()
    text = page.locator(".course-models li").first.inner_text()
    assert "scheduled with your own weights" in text and "Your own weights predicted" in text
    assert desktop.console_errors == []
