"""The web app end to end in real Chromium: what the page shows and what the database then holds."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from django.contrib.auth import get_user_model

from apps.accounts.models import DeviceToken
from apps.content.models import Lesson
from apps.reminders.models import ReminderPreference
from apps.reminders.services import reminder_preference_update, unsubscribe_url
from apps.srs.models import ReviewKind, ReviewLog
from tests.support.browser import (
    PHONE,
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

PASSWORD = "correct horse battery"


def test_sign_in_lands_on_the_course_page(web: Browsing, shipped_course: None, learner: Any) -> None:
    web.goto("/")
    # Signed out, the app sends the visitor to sign in first.
    web.page.wait_for_url("**/signin**")
    # The page says what this is to someone who has never used it: beside the form, or below it on a phone.
    about = web.page.get_by_role("complementary", name="Learn it, then remember it")
    assert "tf.data" in about.inner_text() and "FSRS" in about.inner_text()
    form_box = web.page.get_by_role("button", name="Sign in").bounding_box()
    about_box = about.bounding_box()
    assert form_box is not None and about_box is not None
    if web.viewport.width >= 1000:
        assert about_box["x"] > form_box["x"] + form_box["width"]
    else:
        assert about_box["y"] > form_box["y"]
    fits_sideways(web)
    web.screenshot("signin")
    assert web.axe_serious() == []
    web.page.get_by_label("Email").fill(learner.email)
    web.page.get_by_label("Password").fill(PASSWORD)
    web.page.get_by_role("button", name="Sign in").click()
    web.page.wait_for_url(web.base_url + "/")
    web.page.get_by_role("heading", name="Data Pipelines", exact=False).first.wait_for()
    course_heading = web.page.get_by_role("heading", name="Data Pipelines", exact=False).first
    web.timing_record("course page usable after a reload", web.goto("/", usable=course_heading))
    # This browser's own device, named after it.
    [device] = DeviceToken.objects.filter(user=learner)
    assert device.device_name == "Chrome on Linux"
    web.screenshot("home")
    assert web.axe_serious() == []
    assert web.console_errors == []


def test_a_wrong_password_is_said_in_words(desktop: Browsing, learner: Any) -> None:
    desktop.goto("/signin")
    desktop.page.get_by_label("Email").fill(learner.email)
    desktop.page.get_by_label("Password").fill("not the password")
    desktop.page.get_by_role("button", name="Sign in").click()
    alert = desktop.page.get_by_role("alert").first
    alert.wait_for()
    assert "password" in alert.inner_text().lower()
    no_raw_json(desktop)
    assert not DeviceToken.objects.filter(user=learner).exists()


def test_a_token_revoked_elsewhere_sends_the_learner_to_sign_in_and_back_to_the_page_they_were_on(
    desktop: Browsing, shipped_course: None, learner: Any, token: str
) -> None:
    deck = first_deck()
    study = f"/decks/{deck.slug}/study"
    desktop.sign_in_with_token(token)
    desktop.goto(study)
    desktop.page.get_by_role("button", name="Flip", exact=False).wait_for()
    DeviceToken.objects.filter(user=learner).delete()
    desktop.page.reload()
    desktop.page.wait_for_url(desktop.base_url + "/signin?next=" + study.replace("/", "%2F"))
    desktop.page.get_by_label("Email").fill(learner.email)
    desktop.page.get_by_label("Password").fill(PASSWORD)
    desktop.page.get_by_role("button", name="Sign in").click()
    desktop.page.wait_for_url(desktop.base_url + study)
    desktop.page.get_by_role("button", name="Flip", exact=False).wait_for()


def test_the_lesson_reads_every_section(web: Browsing, shipped_course: None, token: str) -> None:
    lesson = Lesson.objects.filter(archived=False).order_by("position")[0]
    web.sign_in_with_token(token)
    seconds = web.goto(f"/lessons/{lesson.slug}", usable=web.page.get_by_role("heading", name=lesson.title).first)
    for section in lesson.sections.all():
        assert web.page.get_by_role("heading", name=section.title, exact=False).count() >= 1, section.title
    web.timing_record("lesson page usable", seconds)
    web.screenshot("lesson")
    assert web.axe_serious() == []
    # The contents take the reader to each section: the last one is scrolled into view, the hash kept.
    last = lesson.sections.order_by("position").last()
    assert last is not None
    heading = web.page.locator(f"#h-{last.slug}")
    web.page.get_by_role("navigation", name="Sections").get_by_role("link", name=last.title).click()
    web.page.wait_for_url(f"**/lessons/{lesson.slug}#{last.slug}")
    web.page.wait_for_function(
        "id => { const top = document.getElementById(id).getBoundingClientRect().top;"
        " return top >= 0 && top < window.innerHeight; }",
        arg=f"h-{last.slug}",
    )
    assert heading.is_visible()
    contents = web.page.get_by_role("navigation", name="Sections")
    box, text = contents.bounding_box(), web.page.locator(f"#{last.slug}").bounding_box()
    assert box is not None and text is not None
    if web.viewport.width >= 1100:
        # On a wide screen the contents sit beside the text, and are still in view at the lesson's end.
        assert box["x"] >= text["x"] + text["width"]
        assert 0 <= box["y"] < web.viewport.height
    else:
        assert box["x"] < text["x"] + 10
    fits_sideways(web)
    assert web.console_errors == []


def test_a_card_is_flipped_rated_and_undone_from_the_keyboard(
    web: Browsing, shipped_course: None, learner: Any, token: str
) -> None:
    deck = first_deck()
    web.sign_in_with_token(token)
    web.goto(f"/decks/{deck.slug}/study")
    flip = web.page.get_by_role("button", name="Flip", exact=False)
    flip.wait_for()
    web.screenshot("deck-front")
    web.page.keyboard.press("Space")
    good = web.page.get_by_role("button", name="Good", exact=False)
    good.wait_for()
    # Each rating shows when the card would come back.
    assert (good.get_attribute("title") or "").startswith("Next in ")
    assert good.locator(".rating-interval").inner_text().strip()
    web.screenshot("deck-back")
    assert web.axe_serious() == []
    with web.page.expect_response(lambda response: response.url.endswith("/api/v1/reviews/")) as posted:
        web.page.keyboard.press("3")
    assert posted.value.status == 201
    review = json.loads(posted.value.text())
    log = ReviewLog.objects.get(learner=learner, kind=ReviewKind.REVIEW)
    assert log.rating == 3 and log.card.deck_id == deck.pk
    assert str(log.client_review_id) == str(review.get("client_review_id", log.client_review_id))
    with web.page.expect_response(lambda response: "/undo/" in response.url) as undone:
        web.page.keyboard.press("z")
    assert undone.value.status in (200, 201)
    assert ReviewLog.objects.filter(learner=learner, kind=ReviewKind.UNDO, undo_of=log).count() == 1
    # The undone card is shown again, front first.
    flip.wait_for()
    assert web.console_errors == []


@pytest.mark.parametrize("path", ["/study", "/settings", "/progress"])
def test_links_from_elsewhere_open_working_pages(
    desktop: Browsing, shipped_course: None, token: str, path: str
) -> None:
    desktop.sign_in_with_token(token)
    desktop.goto(path)
    assert desktop.page.locator("main").inner_text().strip()
    no_raw_json(desktop)
    desktop.screenshot(path.strip("/"))
    assert desktop.console_errors == []


def test_a_path_the_app_does_not_have_is_a_page_of_the_app_that_says_so(
    desktop: Browsing, shipped_course: None, token: str
) -> None:
    desktop.sign_in_with_token(token)
    with desktop.page.expect_response(lambda response: response.url.endswith("/no-such-page")) as answer:
        desktop.goto("/no-such-page", usable=desktop.page.get_by_role("heading", name="Page not found"))
    assert answer.value.status == 404
    main = desktop.page.locator("main").inner_text()
    assert "There is no page at /no-such-page" in main
    no_raw_json(desktop)
    # The app's own frame, with the way home.
    desktop.page.get_by_role("link", name="Back to home").click()
    desktop.page.wait_for_url(desktop.base_url + "/")
    assert desktop.axe_serious() == []
    assert [error for error in desktop.console_errors if "404" not in error] == []


def test_an_unknown_deck_says_so_with_the_way_home_and_no_retry(
    desktop: Browsing, shipped_course: None, token: str
) -> None:
    desktop.sign_in_with_token(token)
    desktop.goto("/decks/nope/study", usable=desktop.page.get_by_role("alert"))
    alert = desktop.page.get_by_role("alert")
    alert.filter(has_text="Nothing is at this address").wait_for()
    assert desktop.page.get_by_role("button", name="Try again").count() == 0
    alert.get_by_role("link", name="Back to home").click()
    desktop.page.wait_for_url(desktop.base_url + "/")
    assert desktop.axe_serious() == []


def test_the_phone_layout_does_not_scroll_sideways(
    chromium: Browser, live_server: Any, shipped_course: None, token: str
) -> None:
    session = browsing(chromium, live_server.url, PHONE)
    try:
        session.sign_in_with_token(token)
        session.goto("/")
        session.page.get_by_role("heading", name="Data Pipelines", exact=False).first.wait_for()
        assert session.scroll_width() <= PHONE.width
    finally:
        session.close()


def test_the_unsubscribe_link_ends_on_the_apps_confirmation(desktop: Browsing, learner: Any, settings: Any) -> None:
    settings.FRONTEND_URL = desktop.base_url
    reminder_preference_update(learner=learner, enabled=True)
    path = unsubscribe_url(learner_id=learner.pk).removeprefix(settings.SITE_URL)
    desktop.page.goto(desktop.base_url + path)
    desktop.page.get_by_role("button", name="Unsubscribe").click()
    desktop.page.wait_for_url(desktop.base_url + "/unsubscribed")
    desktop.page.get_by_role("heading", name="You are unsubscribed").wait_for()
    desktop.screenshot("unsubscribed")
    assert not ReminderPreference.objects.get(learner=learner).enabled
    assert desktop.axe_serious() == []


def test_sign_up_sign_out_and_a_forgotten_password(
    web: Browsing, settings: Any, mailoutbox: list[Any], deliver_account_emails: Any
) -> None:
    settings.FRONTEND_URL = web.base_url
    email = f"grace-{web.viewport.name}@example.com"
    web.goto("/signup")
    web.screenshot("signup")
    assert web.axe_serious() == []
    web.page.get_by_label("Email").fill(email)
    web.page.get_by_label("Display name").fill("Grace")
    web.page.get_by_label("Password").fill("a long enough passphrase")
    web.page.get_by_role("button", name="Create account").click()
    web.page.get_by_role("heading", name="Check your inbox").wait_for()
    web.screenshot("signup-check-inbox")
    assert web.axe_serious() == []
    assert not get_user_model().objects.filter(email=email).exists()
    assert deliver_account_emails() == ["sent"]
    [confirmation] = mailoutbox
    link = next(word for word in confirmation.body.split() if "/confirm-email?" in word)
    assert link.startswith(web.base_url + "/confirm-email?")
    web.goto(link.removeprefix(web.base_url))
    web.screenshot("confirm-email")
    assert web.axe_serious() == []
    web.page.get_by_role("button", name="Create my account").click()
    web.page.wait_for_url(web.base_url + "/")
    account = get_user_model().objects.get(email=email)
    assert DeviceToken.objects.filter(user=account).count() == 1
    web.page.get_by_text("Grace").first.wait_for()
    # The home page's own requests end first: one still in flight when the token goes would be answered 401.
    web.page.wait_for_load_state("networkidle")

    web.page.get_by_role("button", name="Sign out").click()
    left_for_plain_sign_in(web, "You are signed out on this device.")
    # Signing out revokes the token on the server, not only in the browser.
    assert not DeviceToken.objects.filter(user=account).exists()

    mailoutbox.clear()
    web.goto("/forgot-password")
    web.screenshot("forgot-password")
    assert web.axe_serious() == []
    web.page.get_by_label("Email").fill(email)
    web.page.get_by_role("button", name="Send the link").click()
    web.page.get_by_role("status").filter(has_text="email").first.wait_for()
    assert deliver_account_emails() == ["sent"]
    [message] = mailoutbox
    link = next(word for word in message.body.split() if "/reset-password?" in word)
    assert link.startswith(web.base_url + "/reset-password?")

    web.goto(link.removeprefix(web.base_url))
    web.screenshot("reset-password")
    assert web.axe_serious() == []
    web.page.get_by_label("New password").fill("another long passphrase")
    web.page.get_by_role("button", name="Save and sign in").click()
    web.page.wait_for_url(web.base_url + "/")
    account.refresh_from_db()
    assert account.check_password("another long passphrase")
    assert web.console_errors == []


def test_the_study_pages_shortcuts_are_listed_by_a_key_and_closed_by_another(
    web: Browsing, shipped_course: None, token: str
) -> None:
    web.sign_in_with_token(token)
    web.goto(f"/decks/{first_deck().slug}/study", usable=web.page.get_by_role("button", name="Flip", exact=False))
    web.page.keyboard.press("?")
    dialog = web.page.get_by_role("dialog", name="Keyboard shortcuts")
    dialog.wait_for()
    listed = dialog.locator(".shortcut").all_inner_texts()
    assert [" ".join(item.split()) for item in listed] == [
        "Space Flip the card",
        "1 Again: I did not remember it",
        "2 Hard: I remembered it with difficulty",
        "3 Good: I remembered it",
        "4 Easy: I remembered it at once",
        "Z Undo the last rating",
        "? List these shortcuts",
    ]
    assert web.axe_serious() == []
    # While it is open, the study keys are not the page's: a rating key rates nothing behind it.
    web.page.keyboard.press("3")
    web.page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    assert web.page.get_by_role("button", name="Flip", exact=False).is_visible()
    # Its button opens it too, and its own button closes it.
    web.page.get_by_role("button", name="Keyboard shortcuts").click()
    dialog.wait_for()
    dialog.get_by_role("button", name="Close").click()
    dialog.wait_for(state="hidden")
    assert web.console_errors == []
