"""Decks written out as an Anki package (.apkg): one note per live card, on a note type of this site's own."""

from __future__ import annotations

import hashlib
import html
import io
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import genanki
from django.db.models import Max, Prefetch

from apps.content.models import Card, CardFormat, Deck

# Anki recognises a note type it already has by this id: a package exported again updates the type
# instead of adding a copy, so the number never changes. Anki's own ids lie between 2**30 and 2**31.
NOTE_TYPE_ID = 1_721_560_391
NOTE_TYPE_NAME = "Quizsite card"
FIELD_NAMES = ("Term", "Definition", "Example", "Code")
# Anki's deck ids for exported decks come from the course and deck slugs, in the same range as the note type's.
_DECK_ID_BASE = 1 << 30
_DECK_ID_SPAN = 1 << 30

_FRONT = '<div class="term">{{Term}}</div>'
_BACK = (
    "{{FrontSide}}\n<hr id=answer>\n"
    '<div class="definition">{{Definition}}</div>\n'
    '{{#Example}}<div class="example">{{Example}}</div>{{/Example}}\n'
    '{{#Code}}<pre class="code"><code>{{Code}}</code></pre>{{/Code}}'
)
_CSS = """.card { font-family: sans-serif; font-size: 20px; text-align: center; color: black; background: white; }
.definition { margin-top: 0.5em; }
.example { margin-top: 1em; font-style: italic; color: #444; }
.code { margin-top: 1em; text-align: left; font-family: monospace; font-size: 15px; }
"""

NOTE_TYPE = genanki.Model(
    NOTE_TYPE_ID,
    NOTE_TYPE_NAME,
    fields=[{"name": name} for name in FIELD_NAMES],
    templates=[{"name": "Term to definition", "qfmt": _FRONT, "afmt": _BACK}],
    css=_CSS,
)


def anki_deck_id(*, course_slug: str, deck_slug: str) -> int:
    """The Anki deck id of a deck: the same on every export, so Anki files notes into the deck it made before."""
    digest = hashlib.sha256(f"{course_slug}/{deck_slug}".encode()).digest()
    return _DECK_ID_BASE + int.from_bytes(digest[:8], "big") % _DECK_ID_SPAN


def anki_note_guid(*, card: Card, course_slug: str, deck_slug: str) -> str:
    """The card's note GUID: the one it came from Anki with, else one made from its slugs.

    A GUID that stays the same lets Anki update the note on a second import instead of adding another.
    """
    if card.anki_guid:
        return card.anki_guid
    return str(genanki.guid_for("quizsite", course_slug, deck_slug, card.slug))


# The fields an HTML card holds as HTML; its term and code are text whatever the card's format.
_HTML_FIELDS = frozenset({"Definition", "Example"})


def _field_html(text: str, *, is_html: bool) -> str:
    """A field as Anki stores it, in HTML: text escaped, its line breaks as <br>; HTML as stored."""
    if is_html:
        return text
    return html.escape(text, quote=False).replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>")


def _anki_tag(tag: str) -> str:
    # An Anki tag is one word: its tags are separated by spaces.
    return "_".join(tag.split())


class _EditedNote(genanki.Note):  # type: ignore[misc]
    """A note stamped with its own card's edit time, not the package's.

    Anki's default import takes a note over the one with its GUID only when the package's is newer:
    one stamp for every note would make one edit here overwrite every note, and edits the learner
    made in Anki since, with the export's older content.
    """

    def __init__(self, *, edited_at: datetime, **note: Any) -> None:
        super().__init__(**note)
        self.edited_at = edited_at

    def write_to_db(self, cursor: Any, timestamp: float, deck_id: int, id_gen: Any) -> None:
        super().write_to_db(cursor, self.edited_at.timestamp(), deck_id, id_gen)


def _note(card: Card, *, course_slug: str, deck_slug: str) -> genanki.Note:
    fields = [
        _field_html(getattr(card, name.lower()), is_html=card.format == CardFormat.HTML and name in _HTML_FIELDS)
        for name in FIELD_NAMES
    ]
    return _EditedNote(
        model=NOTE_TYPE,
        fields=fields,
        tags=[_anki_tag(tag) for tag in card.tags if tag.strip()],
        guid=anki_note_guid(card=card, course_slug=course_slug, deck_slug=deck_slug),
        edited_at=card.updated_at,
    )


def _decks_with_cards(decks: Sequence[Deck]) -> list[Deck]:
    live_cards = Card.objects.filter(archived=False).order_by("position", "pk")
    return list(
        Deck.objects.filter(pk__in=[deck.pk for deck in decks])
        .select_related("lesson__course")
        .prefetch_related(Prefetch("cards", queryset=live_cards, to_attr="live_cards"))
        .order_by("lesson__course__title", "lesson__position", "position")
    )


def _content_time(decks: Sequence[Deck]) -> datetime:
    """When the exported content last changed: the package's own time (its note type's, its decks').

    Each note carries its own card's edit time (`_EditedNote`); an unchanged deck exports the same times.
    """
    latest_card = Card.objects.filter(deck__in=decks).aggregate(latest=Max("updated_at"))["latest"]
    return max([deck.updated_at for deck in decks] + ([latest_card] if latest_card is not None else []))


def decks_anki_package(*, decks: Sequence[Deck]) -> bytes:
    """The decks' live cards as one .apkg; each deck is an Anki deck named "Course::Deck"."""
    loaded = _decks_with_cards(decks)
    anki_decks = []
    for deck in loaded:
        course = deck.lesson.course
        anki_deck = genanki.Deck(
            anki_deck_id(course_slug=course.slug, deck_slug=deck.slug),
            f"{_deck_name_part(course.title)}::{_deck_name_part(deck.title)}",
            description=html.escape(deck.description),
        )
        anki_deck.add_model(NOTE_TYPE)
        for card in deck.live_cards:  # type: ignore[attr-defined]
            anki_deck.add_note(_note(card, course_slug=course.slug, deck_slug=deck.slug))
        anki_decks.append(anki_deck)
    buffer = io.BytesIO()
    timestamp = _content_time(loaded).timestamp() if loaded else None
    genanki.Package(anki_decks).write_to_file(buffer, timestamp=timestamp)
    return buffer.getvalue()


def _deck_name_part(title: str) -> str:
    # "::" separates a parent deck from a child in an Anki deck name.
    return title.replace("::", ":")


def anki_package_filename(*, decks: Sequence[Deck]) -> str:
    return f"{decks[0].slug}.apkg" if len(decks) == 1 else "decks.apkg"
