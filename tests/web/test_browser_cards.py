"""The card browser in real Chromium: from the course to its cards, searched and filtered with the
search kept in the address, and a card opened to its history, all against what the API says."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from apps.content.models import Card
from tests.support.browser import Browsing, fits_sideways
from tests.support.progress import days_ago
from tests.support.reviews import post_review, review_body

pytestmark = pytest.mark.django_db(transaction=True)

COURSE = "tensorflow-ai-phd"


def _count(web: Browsing) -> str:
    status = web.page.locator(".browse-count")
    status.filter(has_text=re.compile(r"\d")).wait_for()
    return status.inner_text()


def test_the_cards_are_browsed_searched_filtered_and_opened_to_their_history(
    web: Browsing, shipped_course: None, learner_client: Any, token: str, deck_cards: list[Card]
) -> None:
    forgotten, known = deck_cards[0], deck_cards[1]
    assert post_review(learner_client, review_body(forgotten, 1, days_ago(0))).status_code == 201
    assert post_review(learner_client, review_body(known, 4, days_ago(3))).status_code == 201
    total = learner_client.get(f"/api/v1/courses/{COURSE}/cards/", {"page_size": 1}).json()["count"]

    web.sign_in_with_token(token)
    web.goto("/")
    web.page.get_by_role("link", name="Browse the cards").click()
    web.page.wait_for_url(f"**/courses/{COURSE}/cards")
    web.page.get_by_role("heading", level=1, name="Cards").wait_for()
    assert _count(web) == f"{total} cards"
    # The first page holds at most 50; the rest come on request.
    assert web.page.locator(".browse-item").count() == min(total, 50)
    if total > 50:
        web.page.get_by_role("button", name=re.compile(r"^Show \d+ more$")).click()
        web.page.locator(".browse-item").nth(50).wait_for()
    fits_sideways(web)
    assert web.axe_serious() == []

    # A word of the forgotten card's term, searched: the list is what the API finds for it.
    word = max(forgotten.term.split(), key=len)
    web.page.get_by_label("Search the cards").fill(word)
    web.page.get_by_label("Search the cards").press("Enter")
    expected = learner_client.get(f"/api/v1/courses/{COURSE}/cards/", {"q": word, "page_size": 200}).json()
    web.page.wait_for_url(re.compile(r"\?q="))
    said = f"{expected['count']} {'card matches' if expected['count'] == 1 else 'cards match'}"
    web.page.locator(".browse-count", has_text=re.compile(f"^{said}$")).wait_for()
    terms = web.page.locator(".browse-term").all_inner_texts()
    assert terms == [item["card"]["term"] for item in expected["results"]]

    # Relearning: the card rated Again, and no other.
    web.page.get_by_label("Search the cards").fill("")
    web.page.get_by_label("Search the cards").press("Enter")
    web.page.get_by_label("State").select_option("learning")
    web.page.wait_for_url(re.compile(r"state=learning"))
    web.page.locator(".browse-count", has_text="1 card matches").wait_for()
    item = web.page.locator(".browse-item")
    assert item.locator(".browse-term").inner_text() == forgotten.term
    assert "Learning" in item.inner_text() and "Recall" in item.inner_text()
    web.screenshot("card-browser")

    # The search is in the address: a reload keeps it.
    assert parse_qs(urlparse(web.page.url).query) == {"state": ["learning"]}
    web.page.reload()
    web.page.locator(".browse-count", has_text="1 card matches").wait_for()
    assert web.page.get_by_label("State").input_value() == "learning"

    item.get_by_role("link", name=forgotten.term).click()
    web.page.wait_for_url(f"**/cards/{forgotten.pk}")
    web.page.get_by_role("heading", level=1, name=forgotten.term).wait_for()
    rows = web.page.locator(".history-table tbody tr")
    assert rows.count() == 1
    cells = rows.first.locator("td").all_inner_texts()
    assert cells[1:3] == ["Again", "New"]
    web.screenshot("card-history")
    fits_sideways(web)
    assert web.axe_serious() == []
    assert web.console_errors == []


def test_a_card_never_studied_says_so_and_an_unknown_one_is_not_found(
    desktop: Browsing, shipped_course: None, token: str, deck_cards: list[Card]
) -> None:
    web = desktop
    web.sign_in_with_token(token)
    card = deck_cards[2]
    web.goto(f"/cards/{card.pk}")
    web.page.get_by_role("heading", level=1, name=card.term).wait_for()
    assert "Not studied yet: its reviews will be listed here." in web.page.locator("main").inner_text()
    web.goto("/cards/999999999")
    alert = web.page.get_by_role("alert").first
    alert.wait_for()
    assert "nothing is at this address" in alert.inner_text().lower()
    assert web.page.get_by_role("button", name="Try again").count() == 0
