"""Match the Pairs in real Chromium: a whole board played by mouse and keyboard, and the leaderboard opt-in."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest

from apps.accounts.models import LearnerProfile
from apps.content.models import Card, Course, Deck, Lesson
from apps.games.models import MatchAttempt, MatchBoard, MatchItem
from tests.support.browser import PHONE, Browsing, Viewport, browsing, first_deck, fits_sideways

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator

pytestmark = pytest.mark.django_db(transaction=True)

PAIRS = 4


@pytest.fixture
def deck(db: Any) -> Deck:
    course = Course.objects.create(slug="pipelines", title="Pipelines")
    lesson = Lesson.objects.create(course=course, slug="tf-data", title="tf.data", position=1)
    deck = Deck.objects.create(lesson=lesson, slug="tf-data-words", title="tf.data words", position=1)
    words = [
        ("map", "Applies a function to every element to transform it."),
        ("batch", "Groups consecutive samples into mini-batches."),
        ("shuffle", "Randomizes element order, as stochastic optimization expects."),
        ("cache", "Keeps the output of expensive preprocessing so it is not recomputed every epoch."),
        ("prefetch", "Lets CPU-side input work overlap with computation on the accelerator."),
        ("interleave", "Reads from several data sources at once and merges their elements."),
    ]
    for position, (term, definition) in enumerate(words, start=1):
        Card.objects.create(deck=deck, slug=f"w-{term}", term=term, definition=definition, position=position)
    return deck


def race_time(ms: int) -> str:
    """The page's clock format: minutes, seconds and tenths."""
    tenths = ms // 100
    seconds = tenths // 10
    return f"{seconds // 60}:{seconds % 60:02d}.{tenths % 10}"


def tile(web: Browsing, side: str, tile_id: str) -> Locator:
    return web.page.locator(f'button.match-{side}[data-tile-id="{tile_id}"]')


def answered(web: Browsing, board_id: str, action: Any) -> int:
    with web.page.expect_response(lambda response: f"/api/v1/match/{board_id}/attempts/" in response.url) as sent:
        action()
    return sent.value.status


def test_a_whole_board_is_played_scored_and_ranked(
    web: Browsing, deck: Deck, learner: Any, token: str, viewport: Viewport
) -> None:
    from playwright.sync_api import expect

    web.sign_in_with_token(token)
    web.goto(f"/decks/{deck.slug}/match")
    web.page.get_by_role("heading", name="Match the pairs: tf.data words").wait_for()
    web.page.get_by_label("Pairs on the board").select_option(str(PAIRS))
    start = web.page.get_by_role("button", name="Start")
    start.focus()
    with web.page.expect_response(lambda response: response.url.endswith(f"/decks/{deck.slug}/match/")) as started:
        web.page.keyboard.press("Enter")
    assert started.value.status == 201
    board = MatchBoard.objects.get(learner=learner, deck=deck)
    board_id = str(board.pk)
    assert board.pairs == PAIRS
    pairs = list(MatchItem.objects.filter(board=board).order_by("term_position"))
    first, second, *rest = pairs
    tile(web, "term", first.term_id).wait_for()
    assert web.page.get_by_role("timer").count() == 1

    # One wrong try by mouse: it flashes, shows the penalty, and locks nothing in.
    tile(web, "term", first.term_id).click()
    assert tile(web, "term", first.term_id).get_attribute("aria-pressed") == "true"
    assert answered(web, board_id, lambda: tile(web, "definition", second.definition_id).click()) == 201
    penalty = f"+{board.penalty_per_wrong_ms // 1000} s"
    expect(tile(web, "term", first.term_id)).to_have_class(re.compile(r"\bis-wrong\b"))
    expect(tile(web, "definition", second.definition_id)).to_contain_text(penalty)
    web.screenshot("match-board")
    expect(web.page.locator(".match-status")).to_contain_text(penalty)
    expect(tile(web, "term", first.term_id)).to_be_enabled()
    # A reload takes the board up again where it was, on the server's clock and counts.
    web.page.reload()
    expect(web.page.locator(".match-status")).to_contain_text(penalty)
    expect(tile(web, "term", first.term_id)).to_be_enabled()
    assert web.axe_serious() == []
    if viewport == PHONE:
        assert web.scroll_width() <= PHONE.width

    # The first pair by keyboard: Space picks the term, the right arrow crosses to the definitions.
    tile(web, "term", first.term_id).focus()
    web.page.keyboard.press("Space")
    web.page.keyboard.press("ArrowRight")
    assert web.page.evaluate("document.activeElement.classList.contains('match-definition')")
    tile(web, "definition", first.definition_id).focus()
    assert answered(web, board_id, lambda: web.page.keyboard.press("Enter")) == 201
    expect(tile(web, "term", first.term_id)).to_be_disabled()
    # Focus stays on the board, on a tile still open.
    assert web.page.evaluate("document.activeElement.classList.contains('match-tile')")

    # The rest by mouse, definition first for one of them.
    for index, item in enumerate([second, *rest]):
        if index == 0:
            tile(web, "definition", item.definition_id).click()
            status = answered(web, board_id, lambda item=item: tile(web, "term", item.term_id).click())
        else:
            tile(web, "term", item.term_id).click()
            status = answered(web, board_id, lambda item=item: tile(web, "definition", item.definition_id).click())
        assert status == 201

    web.page.get_by_role("heading", name="All pairs matched").wait_for()
    board.refresh_from_db()
    assert board.finished_at is not None and board.matched == PAIRS
    assert (board.wrong_attempts, board.penalty_ms) == (1, board.penalty_per_wrong_ms)
    assert board.score_ms == (board.elapsed_ms or 0) + board.penalty_ms
    assert board.personal_best is True
    assert MatchAttempt.objects.filter(board=board).count() == PAIRS + 1
    score = web.page.locator(".match-score-value")
    assert score.inner_text() == race_time(board.score_ms)
    assert score.get_attribute("data-score-ms") == str(board.score_ms)
    assert web.page.get_by_text("Personal best!").count() == 1
    web.page.get_by_role("heading", name="Recent boards").wait_for()
    assert web.page.locator(".match-table tbody tr").count() == 1
    web.page.get_by_text("Nobody is on this leaderboard yet.").wait_for()

    # Opting in needs a display name; then the learner is listed under it.
    web.page.get_by_label("Show me on leaderboards").check()
    web.page.get_by_label("Display name").fill("Ada L.")
    with web.page.expect_response(lambda response: response.url.endswith("/api/v1/me/")) as patched:
        web.page.get_by_role("button", name="Save").click()
    assert patched.value.status == 200
    web.page.get_by_text("Saved. You appear as “Ada L.”.").wait_for()
    profile = LearnerProfile.objects.get(learner=learner)
    assert (profile.show_on_leaderboards, profile.display_name) == (True, "Ada L.")
    web.page.locator(".match-leaderboard").get_by_text("Ada L.").wait_for()
    web.page.get_by_text("Your place: 1").wait_for()
    web.screenshot("match-finished")
    assert web.axe_serious() == []
    if viewport == PHONE:
        assert web.scroll_width() <= PHONE.width
    assert web.console_errors == []


def test_opting_in_without_a_display_name_is_refused_in_words(
    chromium: Browser, live_server: Any, deck: Deck, learner: Any, token: str
) -> None:
    web = browsing(chromium, live_server.url, PHONE)
    try:
        web.sign_in_with_token(token)
        web.goto(f"/decks/{deck.slug}/match")
        web.page.get_by_label("Show me on leaderboards").check()
        web.page.get_by_label("Display name").fill("")
        # The field is required once opting in: the browser itself asks for it.
        web.page.get_by_label("Display name").evaluate("element => element.removeAttribute('required')")
        with web.page.expect_response(lambda response: response.url.endswith("/api/v1/me/")) as patched:
            web.page.get_by_role("button", name="Save").click()
        assert patched.value.status == 400
        web.page.get_by_text("Set a display name to appear on leaderboards.").wait_for()
        body = web.page.locator("body").inner_text()
        assert '{"error"' not in body
        assert not LearnerProfile.objects.filter(learner=learner, show_on_leaderboards=True).exists()
    finally:
        web.close()


def test_a_board_of_the_courses_own_cards_fits_the_screen_and_keeps_its_terms_in_view(
    web: Browsing, shipped_course: None, token: str, viewport: Viewport
) -> None:
    deck = first_deck()
    web.sign_in_with_token(token)
    web.goto(f"/decks/{deck.slug}/match")
    web.page.get_by_label("Pairs on the board").select_option("6")
    with web.page.expect_response(lambda response: response.url.endswith(f"/decks/{deck.slug}/match/")):
        web.page.get_by_role("button", name="Start").click()
    terms = web.page.locator("button.match-term")
    definitions = web.page.locator("button.match-definition")
    terms.first.wait_for()
    assert terms.count() == definitions.count() == 6
    fits_sideways(web)

    # Terms written as code are set in monospace; terms in words are not, and no word is cut in two.
    for term in terms.all():
        text = term.inner_text().split("\n")[0]
        mono = "monospace" in term.evaluate("(element) => getComputedStyle(element).fontFamily")
        assert mono == bool(re.fullmatch(r"[\w.()]+", text) and re.search(r"[_.()]|[a-z][A-Z]", text)), text
        lines = term.locator(".match-tile-text").evaluate(
            "(element) => { const range = document.createRange(); range.selectNodeContents(element);"
            " return Array.from(range.getClientRects(), (rect) => Math.round(rect.top)); }"
        )
        assert len(set(lines)) <= max(1, len(re.split(r"[\s_.=,]+|(?=\()|(?<=[a-z])(?=[A-Z])", text))), text
        # The tile holds its text, and the column holds the tile: nothing runs past an edge or is cut off.
        assert term.evaluate("(element) => element.scrollWidth <= element.clientWidth"), text
        assert term.evaluate(
            "(element) => element.getBoundingClientRect().right"
            " <= element.closest('.match-column').getBoundingClientRect().right + 0.5"
        ), text

    web.screenshot("match-course-board")
    height = web.page.viewport_size["height"] if web.page.viewport_size else 0
    if viewport == PHONE:
        # One screen: with the timer at its top, the last definition ends above the screen's bottom. A
        # definition shows its first lines until it is picked, then the whole of it; its name is always whole.
        web.page.locator(".match-status").evaluate("(element) => element.scrollIntoView()")
        last = definitions.last.bounding_box()
        assert last is not None and last["y"] + last["height"] <= height
        clipped = "(element) => { const text = element.querySelector('.match-tile-text');"
        clipped += " return text.scrollHeight > text.clientHeight + 1; }"
        longest = max(definitions.all(), key=lambda tile: len(tile.inner_text()))
        assert longest.evaluate(clipped)
        assert len(longest.get_attribute("aria-label") or longest.inner_text()) > 150
        longest.click()
        web.page.wait_for_function(
            "() => { const text = document.querySelector('.match-definition.is-selected .match-tile-text');"
            " return text !== null && text.scrollHeight <= text.clientHeight + 1; }"
        )
        longest.click()
        # Scrolled down to the last definition, the terms are still on the screen, below the timer.
        definitions.last.scroll_into_view_if_needed()
        status = web.page.locator(".match-status").bounding_box()
        for term in terms.all():
            box = term.bounding_box()
            assert box is not None and status is not None
            assert box["y"] >= status["y"] + status["height"] - 1 and box["y"] + box["height"] <= height
    else:
        # The whole board fits a 1280x800 screen once the timer is at its top.
        web.page.locator(".match-status").evaluate("(element) => element.scrollIntoView()")
        last = definitions.last.bounding_box()
        assert last is not None and last["y"] + last["height"] <= height
    assert web.axe_serious() == []
    assert web.console_errors == []
