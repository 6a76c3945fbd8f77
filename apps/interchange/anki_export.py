"""Decks written out as an Anki package (.apkg): one note per live card, on a note type of this site's own."""

from __future__ import annotations

import hashlib
import html
import io
import re
import tempfile
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import genanki
from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Max, Prefetch

from apps.content.models import Card, CardFormat, Deck
from apps.interchange.anki_origins import note_for_export
from apps.interchange.models import AnkiNoteOrigin, AnkiNoteType, MediaFile

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


class _EditedNote(genanki.Note):
    """A note stamped with its own card's edit time, not the package's.

    Anki's default import takes a note over the one with its GUID only when the package's is newer:
    one stamp for every note would make one edit here overwrite every note, and edits the learner
    made in Anki since, with the export's older content.
    """

    def __init__(self, *, edited_at: float, **note: Any) -> None:
        super().__init__(**note)
        self.edited_at = edited_at

    def write_to_db(self, cursor: Any, timestamp: float, deck_id: int, id_gen: Any) -> None:
        super().write_to_db(cursor, self.edited_at, deck_id, id_gen)


class _KeptNoteType(genanki.Model):
    """A note type of Anki's own, as it came: same id, name, fields, templates and styling, and its own
    modification time, so Anki's importer sees the type it has and changes nothing of it."""

    def __init__(self, stored: AnkiNoteType) -> None:
        super().__init__(
            stored.anki_id,
            stored.name,
            fields=[{"name": name} for name in stored.fields],
            templates=[
                {"name": template["name"], "qfmt": template["front"], "afmt": template["back"]}
                for template in stored.templates
            ],
            css=stored.css,
            sort_field_index=stored.sort_field,
        )
        self.modified = stored.modified

    def to_json(self, timestamp: float, deck_id: int) -> dict[str, Any]:
        data: dict[str, Any] = super().to_json(timestamp, deck_id)
        data["mod"] = self.modified
        return data


# Where a card's media is served (apps.interchange.media.media_url): the content's hash, then its name.
_SERVED_MEDIA = re.compile(rf"^{re.escape(settings.MEDIA_URL)}([0-9a-f]{{64}})/([^/]+)$")
# As the sanitizer writes them: lower-case elements, attributes in double quotes.
_IMAGE_SOURCE = re.compile(r'(<img\b[^>]*?\ssrc=")([^"]*)(")')
_SOUND_PLAYER = re.compile(r'<audio\b[^>]*?\ssrc="([^"]*)"[^>]*>\s*</audio>')


class _PackageMedia:
    """The media a package's notes show, by the name each has inside the package (Anki's media folder)."""

    def __init__(self, files: dict[str, MediaFile]) -> None:
        self._files = files
        self.by_name: dict[str, MediaFile] = {}
        self._names: dict[str, str] = {}

    def name_of(self, url: str) -> str | None:
        """The package's name for the file a served URL shows; None for a URL that is not a stored file's."""
        found = _SERVED_MEDIA.match(html.unescape(url))
        if found is None or found[1] not in self._files:
            return None
        sha256, name = found[1], unquote(found[2])
        if sha256 in self._names:
            return self._names[sha256]
        # Two files under one name would overwrite each other in Anki's media folder.
        chosen = name if name not in self.by_name else f"{sha256[:12]}-{name}"
        self._names[sha256] = chosen
        self.by_name[chosen] = self._files[sha256]
        return chosen

    def field(self, value: str) -> str:
        """A field with its media as Anki keeps them: images by name, sounds as [sound:name]."""

        def sound(match: re.Match[str]) -> str:
            name = self.name_of(match[1])
            return match[0] if name is None else f"[sound:{name}]"

        def image(match: re.Match[str]) -> str:
            name = self.name_of(match[2])
            return match[0] if name is None else f"{match[1]}{html.escape(name)}{match[3]}"

        return _IMAGE_SOURCE.sub(image, _SOUND_PLAYER.sub(sound, value))


def _served_hashes(cards: Iterable[Card]) -> set[str]:
    """The content hashes of the stored media the HTML cards show."""
    hashes: set[str] = set()
    for card in cards:
        if card.format != CardFormat.HTML:
            continue
        for value in (card.definition, card.example):
            urls = [match[2] for match in _IMAGE_SOURCE.finditer(value)]
            urls += [match[1] for match in _SOUND_PLAYER.finditer(value)]
            hashes.update(found[1] for url in urls if (found := _SERVED_MEDIA.match(html.unescape(url))))
    return hashes


def _origin_of(card: Card) -> AnkiNoteOrigin | None:
    try:
        return card.anki_origin
    except ObjectDoesNotExist:
        return None


def _note(
    card: Card, *, course_slug: str, deck_slug: str, media: _PackageMedia, note_types: dict[int, _KeptNoteType]
) -> genanki.Note:
    fields = [
        _field_html(getattr(card, name.lower()), is_html=card.format == CardFormat.HTML and name in _HTML_FIELDS)
        for name in FIELD_NAMES
    ]
    if card.format == CardFormat.HTML:
        fields = [
            media.field(value) if name in _HTML_FIELDS else value
            for name, value in zip(FIELD_NAMES, fields, strict=True)
        ]
    tags = [_anki_tag(tag) for tag in card.tags if tag.strip()]
    guid = anki_note_guid(card=card, course_slug=course_slug, deck_slug=deck_slug)
    origin = _origin_of(card)
    if origin is None:
        return _EditedNote(model=NOTE_TYPE, fields=fields, tags=tags, guid=guid, edited_at=card.updated_at.timestamp())
    # A card from Anki goes back on its own note type, as the note it came from.
    kept = note_for_export(origin, card=card, front=fields[0], back=fields[1], tags=tags)
    model = note_types.get(kept.note_type.anki_id)
    if model is None:
        model = note_types[kept.note_type.anki_id] = _KeptNoteType(kept.note_type)
    edited_at = kept.modified if kept.modified is not None else card.updated_at.timestamp()
    return _EditedNote(model=model, fields=kept.fields, tags=kept.tags, guid=guid, edited_at=edited_at)


def _decks_with_cards(decks: Sequence[Deck]) -> list[Deck]:
    # A variant on purpose: staff export any deck they pick, archived or not; its archived cards stay out.
    live_cards = Card.objects.filter(archived=False).select_related("anki_origin__note_type").order_by("position", "pk")
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
    """The decks' live cards as one .apkg; each deck is an Anki deck named "Course::Deck".

    The images and sounds the cards show travel inside the package, named as Anki names media.
    """
    loaded = _decks_with_cards(decks)
    cards = [card for deck in loaded for card in deck.live_cards]  # type: ignore[attr-defined]
    media = _PackageMedia({file.sha256: file for file in MediaFile.objects.filter(sha256__in=_served_hashes(cards))})
    note_types: dict[int, _KeptNoteType] = {}
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
            note = _note(card, course_slug=course.slug, deck_slug=deck.slug, media=media, note_types=note_types)
            anki_deck.add_model(note.model)
            anki_deck.add_note(note)
        anki_decks.append(anki_deck)
    buffer = io.BytesIO()
    timestamp = _content_time(loaded).timestamp() if loaded else None
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for name, file in media.by_name.items():
            path = Path(folder) / name
            with file.file.open("rb") as stored:
                path.write_bytes(stored.read())
            paths.append(str(path))
        genanki.Package(anki_decks, media_files=paths).write_to_file(buffer, timestamp=timestamp)
    return buffer.getvalue()


def _deck_name_part(title: str) -> str:
    # "::" separates a parent deck from a child in an Anki deck name.
    return title.replace("::", ":")


def anki_package_filename(*, decks: Sequence[Deck]) -> str:
    return f"{decks[0].slug}.apkg" if len(decks) == 1 else "decks.apkg"
