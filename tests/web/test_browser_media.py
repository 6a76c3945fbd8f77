"""Media on cards in real Chromium: an HTML card's image and sound, served by this site and shown on the
card's back, sized for a phone, named for a screen reader; anything from elsewhere is never loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from apps.content.models import Card, CardFormat
from apps.interchange.media import media_files_store, media_sha256, media_url
from tests.support.anki_packages import MP3_BYTES
from tests.support.browser import Browsing, first_deck, fits_sideways
from tests.support.media import png_bytes

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def media_root(settings: Any, tmp_path: Path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def _back_of_html_card(web: Browsing, token: str, definition: str) -> Card:
    """The shipped deck's first card made an HTML card with this definition, studied and flipped."""
    card = first_deck().cards.order_by("position")[0]
    card.format = CardFormat.HTML
    card.definition = definition
    card.save(update_fields=["format", "definition"])
    web.sign_in_with_token(token)
    web.goto(f"/decks/{card.deck.slug}/study", usable=web.page.get_by_role("button", name="Flip", exact=False))
    web.page.keyboard.press("Space")
    return card


def test_an_html_cards_image_and_sound_show_on_its_back_and_fit_a_phone(
    web: Browsing, shipped_course: None, token: str, media_root: Path
) -> None:
    chart = png_bytes(1600, 400)
    media_files_store(files={"loss_chart.png": chart, "say it.mp3": MP3_BYTES})
    chart_url = media_url(sha256=media_sha256(chart), name="loss_chart.png")
    sound_url = media_url(sha256=media_sha256(MP3_BYTES), name="say it.mp3")
    # Stored as is, past the importer's sanitizer: the page applies the same allow-list again.
    card = _back_of_html_card(
        web,
        token,
        f'<p>Training <b>loss</b> per epoch</p><img src="{chart_url}">'
        f'<audio src="{sound_url}" controls></audio>'
        '<img src="https://elsewhere.example/track.png"><a href="https://elsewhere.example">away</a>',
    )
    image = web.page.get_by_role("img", name="Image: loss chart")
    image.wait_for()
    assert image.get_attribute("src") == chart_url
    web.page.wait_for_function("() => document.querySelector('.card-image').complete")
    loaded = image.evaluate("(element) => [element.naturalWidth, element.naturalHeight]")
    assert loaded == [1600, 400]
    # Scaled down to the card, whatever the screen.
    box = image.bounding_box()
    card_box = web.page.locator(".card-html").first.bounding_box()
    assert box is not None and card_box is not None
    assert box["width"] <= card_box["width"] + 0.5 and box["width"] < 1600
    assert web.page.locator(".card-html b", has_text="loss").count() == 1

    sound = web.page.locator(".card-sound audio")
    assert sound.get_attribute("src") == sound_url
    assert sound.get_attribute("aria-label") == "Sound: say it"
    assert web.page.locator(".card-sound-name").inner_text() == "Sound: say it"

    # Nothing from elsewhere is loaded or linked.
    assert web.page.locator(".card-html img").count() == 1
    assert web.page.locator(".card-html a").count() == 0
    assert "away" in web.page.locator(".card-html").first.inner_text()
    fits_sideways(web)
    assert web.axe_serious() == []
    assert web.console_errors == []

    # The card's own page shows the same.
    web.goto(f"/cards/{card.pk}", usable=web.page.get_by_role("img", name="Image: loss chart"))
    assert web.page.locator(".card-sound audio").count() == 1


def test_an_image_a_course_file_ships_shows_on_its_card(
    web: Browsing, shipped_course: None, token: str, settings: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "course-media"
    folder.mkdir()
    (folder / "prefetch_overlap.png").write_bytes(png_bytes(640, 200))
    settings.COURSE_MEDIA_DIR = folder
    _back_of_html_card(
        web,
        token,
        '<p>Work overlaps.</p><img src="/media/course/prefetch_overlap.png" alt="Two overlapping timelines">',
    )
    image = web.page.get_by_role("img", name="Two overlapping timelines")
    image.wait_for()
    web.page.wait_for_function("() => document.querySelector('.card-image').complete")
    assert image.evaluate("(element) => [element.naturalWidth, element.naturalHeight]") == [640, 200]
    box = image.bounding_box()
    card_box = web.page.locator(".card-html").first.bounding_box()
    assert box is not None and card_box is not None and box["width"] <= card_box["width"] + 0.5
    fits_sideways(web)
    assert web.axe_serious() == []
    assert web.console_errors == []
