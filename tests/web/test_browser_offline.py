"""Memory Deck reviews made offline, in real Chromium: kept in IndexedDB, sent once when the connection returns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from apps.content.models import Card, Deck
from apps.content.services import content_archived_set
from apps.srs.models import ReviewKind, ReviewLog
from tests.support.browser import Browsing, first_deck, fits_sideways, left_for_plain_sign_in

if TYPE_CHECKING:
    pass

pytestmark = pytest.mark.django_db(transaction=True)

BATCH = "**/api/v1/reviews/batch/"

# Every review kept on the device, as the app stores it, oldest first.
READ_QUEUE = """
() => new Promise((resolve, reject) => {
  const open = indexedDB.open("quizsite-offline");
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const db = open.result;
    if (!db.objectStoreNames.contains("reviews")) { db.close(); resolve([]); return; }
    const all = db.transaction("reviews", "readonly").objectStore("reviews").getAll();
    all.onerror = () => reject(all.error);
    all.onsuccess = () => { db.close(); resolve(all.result); };
  };
})
"""


def _unexpected_errors(web: Browsing) -> list[str]:
    """Console errors other than the requests these tests make fail: offline, blocked, or refused on purpose.

    A Content-Security-Policy violation or an uncaught exception is still one."""
    return [error for error in web.console_errors if not error.startswith("Failed to load resource:")]


def _open_study(web: Browsing, token: str) -> Deck:
    deck = first_deck()
    web.sign_in_with_token(token)
    web.goto(f"/decks/{deck.slug}/study")
    web.page.get_by_role("button", name="Flip", exact=False).wait_for()
    return deck


def _rate_good(web: Browsing) -> str:
    """Flips the shown card and rates it Good from the keyboard; returns the card's term."""
    term = web.page.locator(".flashcard .term").inner_text()
    web.page.get_by_role("button", name="Flip", exact=False).wait_for()
    web.page.keyboard.press("Space")
    web.page.get_by_role("button", name="Good", exact=False).wait_for()
    web.page.keyboard.press("3")
    return term


def _wait_for_count(web: Browsing, count: int) -> None:
    text = "1 review waiting to sync" if count == 1 else f"{count} reviews waiting to sync"
    web.page.locator(".site-header [role=status]", has_text=text).wait_for()


def test_reviews_made_offline_are_kept_through_a_reload_and_recorded_once(
    web: Browsing, shipped_course: None, learner: Any, token: str
) -> None:
    _open_study(web, token)
    web.context.set_offline(True)
    terms = []
    for count in (1, 2, 3):
        terms.append(_rate_good(web))
        _wait_for_count(web, count)
    # Each card was a different one: the session went on without the server.
    assert len(set(terms)) == 3
    note = web.page.get_by_role("region", name="Studying offline")
    assert "3 reviews waiting to sync" in note.inner_text()
    assert "before the connection was lost" in note.inner_text()
    web.screenshot("deck-offline-waiting")
    assert web.axe_serious() == []
    fits_sideways(web)

    kept = web.page.evaluate(READ_QUEUE)
    assert [item["owner"] for item in kept] == [learner.pk] * 3
    ids = [item["id"] for item in kept]
    assert [item["review"]["client_review_id"] for item in kept] == ids and len(set(ids)) == 3
    assert [item["review"]["rating"] for item in kept] == [3, 3, 3]
    assert [item["review"]["reviewed_at"] for item in kept] == sorted(item["review"]["reviewed_at"] for item in kept)
    # Each kept review carries the time spent on it, as the batch endpoint takes it: whole milliseconds.
    assert all(isinstance(item["review"]["duration_ms"], int) for item in kept)
    assert not ReviewLog.objects.filter(learner=learner).exists()

    # Back online but the batch endpoint unreachable: the shell reloads and the queue is still there.
    web.page.route(BATCH, lambda route: route.abort())
    web.context.set_offline(False)
    web.page.reload()
    web.page.get_by_role("button", name="Flip", exact=False).wait_for()
    _wait_for_count(web, 3)
    assert [item["id"] for item in web.page.evaluate(READ_QUEUE)] == ids
    assert not ReviewLog.objects.filter(learner=learner).exists()

    # The connection returns: everything waiting goes through the batch endpoint.
    web.context.set_offline(True)
    web.page.unroute(BATCH)
    with web.page.expect_response(lambda response: response.url.endswith("/api/v1/reviews/batch/")) as sent:
        web.context.set_offline(False)
    assert sent.value.status == 200
    web.page.locator(".site-header [role=status]", has_text="All reviews synced").wait_for(state="attached")
    web.page.locator(".sync-badge").wait_for(state="detached")
    assert web.page.evaluate(READ_QUEUE) == []

    logs = ReviewLog.objects.filter(learner=learner, kind=ReviewKind.REVIEW)
    assert logs.count() == 3
    for client_review_id in ids:
        assert logs.filter(client_review_id=client_review_id).count() == 1
    assert sorted(logs.values_list("card__term", flat=True)) == sorted(terms)
    assert _unexpected_errors(web) == []


def test_a_review_the_server_refuses_is_dropped_and_said_in_words(
    desktop: Browsing, shipped_course: None, learner: Any, token: str
) -> None:
    deck = _open_study(desktop, token)
    desktop.context.set_offline(True)
    refused_term = _rate_good(desktop)
    _wait_for_count(desktop, 1)
    kept_term = _rate_good(desktop)
    _wait_for_count(desktop, 2)
    # While the learner was offline, the first card was taken out of the course.
    assert content_archived_set(items=Card.objects.filter(deck=deck, term=refused_term), archived=True) == 1

    desktop.page.get_by_role("button", name="Send now").wait_for()
    desktop.context.set_offline(False)
    alert = desktop.page.get_by_role("alert").filter(has_text="could not be saved")
    alert.wait_for()
    assert alert.inner_text().startswith("1 review could not be saved:")
    assert refused_term in alert.inner_text()
    desktop.page.locator(".sync-badge").wait_for(state="detached")
    assert desktop.page.evaluate(READ_QUEUE) == []

    logs = ReviewLog.objects.filter(learner=learner, kind=ReviewKind.REVIEW)
    assert list(logs.values_list("card__term", flat=True)) == [kept_term]
    desktop.screenshot("deck-offline-refused")
    assert desktop.axe_serious() == []
    desktop.page.get_by_role("button", name="Dismiss").click()
    assert alert.count() == 0
    assert _unexpected_errors(desktop) == []


def test_the_app_starts_without_a_connection_once_it_has_been_opened(
    desktop: Browsing, shipped_course: None, learner: Any, token: str
) -> None:
    web = desktop
    web.sign_in_with_token(token)
    web.goto("/")
    web.page.get_by_role("link", name="Browse the cards").wait_for()
    # The service worker keeps the shell and the bundle; it controls the page once it is active.
    web.page.evaluate("() => navigator.serviceWorker.ready.then(() => true)")
    web.page.wait_for_function("() => navigator.serviceWorker.controller !== null")

    web.context.set_offline(True)
    for path in ("/", f"/decks/{first_deck().slug}/study", "/settings"):
        web.page.goto(web.base_url + path)
        # The app's own frame, signed in as the account last seen, and its own words for the failure.
        web.page.get_by_role("navigation", name="Main").wait_for()
        assert learner.email in web.page.locator(".site-header").inner_text()
        alert = web.page.get_by_role("alert").first
        alert.wait_for()
        assert "connection" in alert.inner_text().lower() or "offline" in alert.inner_text().lower()
    # Styled as online: the style sheet came from the kept copy.
    assert web.page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(247, 247, 245)"
    assert web.axe_serious() == []

    web.context.set_offline(False)
    web.page.reload()
    web.page.get_by_role("heading", level=1, name="Settings").wait_for()
    assert _unexpected_errors(web) == []


def test_signing_out_forgets_the_account_kept_for_starting_offline(
    desktop: Browsing, shipped_course: None, token: str
) -> None:
    web = desktop
    web.sign_in_with_token(token)
    web.goto("/")
    web.page.get_by_role("link", name="Browse the cards").wait_for()
    assert web.page.evaluate("localStorage.getItem('quizsite.me')") is not None
    web.page.get_by_role("button", name="Sign out").click()
    web.page.wait_for_url("**/signin")
    assert web.page.evaluate("localStorage.getItem('quizsite.me')") is None


def _shown_term(web: Browsing) -> str:
    web.page.get_by_role("button", name="Flip", exact=False).wait_for()
    return web.page.locator(".flashcard .term").inner_text()


def test_a_deck_studied_before_is_studied_after_an_offline_start_and_undo_takes_back_waiting_reviews(
    web: Browsing, shipped_course: None, learner: Any, token: str
) -> None:
    deck = _open_study(web, token)
    web.page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    first_online = _shown_term(web)

    # The app starts with no connection: the deck's queue comes from the device.
    web.context.set_offline(True)
    web.page.goto(web.base_url + "/")
    kept = web.page.get_by_role("region", name="Kept on this device")
    kept.get_by_role("link", name=deck.title).click()
    note = web.page.get_by_role("region", name="Studying offline")
    note.wait_for()
    assert "kept when the deck was last loaded" in note.inner_text()
    assert web.page.get_by_role("heading", level=1).inner_text() == f"Study {deck.title}"
    assert _shown_term(web) == first_online
    terms = [_rate_good(web)]
    _wait_for_count(web, 1)
    terms.append(_rate_good(web))
    _wait_for_count(web, 2)
    web.screenshot("deck-offline-start")
    assert web.axe_serious() == []
    fits_sideways(web)

    # Undo takes the last review back off the device: never sent, and its card is shown again.
    web.page.keyboard.press("z")
    _wait_for_count(web, 1)
    assert _shown_term(web) == terms[1]
    assert [item["review"]["card"] for item in web.page.evaluate(READ_QUEUE)] == [
        Card.objects.get(deck=deck, term=terms[0]).pk
    ]

    # A reload without a connection: the kept queue, less the card whose review waits.
    web.page.reload()
    _wait_for_count(web, 1)
    assert _shown_term(web) != terms[0]

    # The connection returns: the one waiting review is sent, once.
    web.context.set_offline(False)
    web.page.locator(".sync-badge").wait_for(state="detached")
    standing = ReviewLog.objects.standing().filter(learner=learner)
    assert list(standing.values_list("card__term", flat=True)) == [terms[0]]

    # A review made offline and sent meanwhile is undone on the server.
    web.context.set_offline(True)
    offline_term = _rate_good(web)
    _wait_for_count(web, 1)
    web.context.set_offline(False)
    web.page.locator(".sync-badge").wait_for(state="detached")
    assert standing.filter(card__term=offline_term).count() == 1
    web.page.keyboard.press("z")
    web.page.locator(".flashcard .term", has_text=offline_term).wait_for()
    assert not standing.filter(card__term=offline_term).exists()
    assert ReviewLog.objects.filter(learner=learner, kind=ReviewKind.UNDO, card__term=offline_term).count() == 1
    assert _unexpected_errors(web) == []


def test_signing_out_forgets_the_decks_kept_for_studying_offline(
    desktop: Browsing, shipped_course: None, token: str
) -> None:
    _open_study(desktop, token)
    assert desktop.page.evaluate("Object.keys(localStorage).some((key) => key.startsWith('quizsite.study.'))")
    desktop.page.get_by_role("button", name="Sign out").click()
    left_for_plain_sign_in(desktop, "You are signed out on this device.")
    assert not desktop.page.evaluate("Object.keys(localStorage).some((key) => key.startsWith('quizsite.study.'))")
