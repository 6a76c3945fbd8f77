"""The Anki notes imported cards came from, kept so that an export gives Anki back its own notes.

A card imported from Anki keeps its note's type (id, name, fields, templates, styling), fields, tags
and edit time. Exported again, a card unchanged here is that note exactly, on that note type, so the
collection it came from takes it as its own; a card edited here carries its new front and back in
the note's first two fields and keeps the rest.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from apps.content.models import Card
from apps.interchange.anki_package import AnkiNoteType as PackageNoteType
from apps.interchange.anki_package import AnkiPackage
from apps.interchange.models import AnkiNoteOrigin, AnkiNoteType

CONTENT_FIELDS = ("term", "definition", "example", "code", "format")


def card_content(card: Card) -> dict[str, Any]:
    return {name: getattr(card, name) for name in CONTENT_FIELDS}


def note_origins_store(*, cards: Iterable[Card], package: AnkiPackage, skip_note_type_ids: set[int]) -> int:
    """Keep, for each card that came from one of the package's notes, the note and its type; returns rows written."""
    notes = {note.guid: note for note in package.notes}
    cards = list(cards)
    kept = {
        origin.card_id: origin
        for origin in AnkiNoteOrigin.objects.filter(card__in=[card.pk for card in cards]).select_related("note_type")
    }
    stored_types: dict[int, AnkiNoteType] = {}
    origins = []
    for card in cards:
        note = notes.get(card.anki_guid)
        if note is None or note.note_type_id in skip_note_type_ids:
            continue
        note_type = stored_types.get(note.note_type_id)
        if note_type is None:
            note_type = stored_types[note.note_type_id] = _note_type_store(package.note_types[note.note_type_id])
        origin = AnkiNoteOrigin(
            card=card,
            note_type=note_type,
            fields=list(note.fields),
            tags=list(note.tags),
            modified=note.modified,
            imported_content=card_content(card),
        )
        # A package imported again mostly holds the notes as they were: those rows are left alone.
        if not _same_origin(kept.get(card.pk), origin):
            origins.append(origin)
    # One statement for a deck of notes, however many: a card imported again takes its note as it is now.
    AnkiNoteOrigin.objects.bulk_create(
        origins,
        update_conflicts=True,
        unique_fields=["card"],
        update_fields=[name.removesuffix("_id") for name in _ORIGIN_FIELDS],
        batch_size=1000,
    )
    return len(origins)


def _same_origin(stored: AnkiNoteOrigin | None, origin: AnkiNoteOrigin) -> bool:
    if stored is None:
        return False
    return all(getattr(stored, name) == getattr(origin, name) for name in _ORIGIN_FIELDS)


_ORIGIN_FIELDS = ("note_type_id", "fields", "tags", "modified", "imported_content")


def _note_type_store(note_type: PackageNoteType) -> AnkiNoteType:
    stored, _ = AnkiNoteType.objects.update_or_create(
        anki_id=note_type.id,
        defaults={
            "name": note_type.name,
            "fields": list(note_type.fields),
            "templates": [
                {"name": template.name, "front": template.front, "back": template.back}
                for template in note_type.templates
            ],
            "css": note_type.css,
            "sort_field": note_type.sort_field,
            "modified": note_type.modified,
        },
    )
    return stored


@dataclass(frozen=True)
class NoteForExport:
    """What an exported note of a card from Anki holds."""

    note_type: AnkiNoteType
    fields: list[str]
    tags: list[str]
    # None: edited here since it came, so the card's own edit time.
    modified: int | None


def note_for_export(origin: AnkiNoteOrigin, *, card: Card, front: str, back: str, tags: list[str]) -> NoteForExport:
    """The note to export for a card that came from Anki, given the card's front, back and tags as Anki writes them.

    Unchanged here, it is the note as it came, edit time and all: Anki finds nothing newer to take.
    Edited, its first two fields are the card's, and it keeps the other fields and Anki's own tags.
    """
    if card_content(card) == origin.imported_content and card.tags == content_tags(origin.tags):
        return NoteForExport(origin.note_type, list(origin.fields), list(origin.tags), origin.modified)
    fields = list(origin.fields)
    fields[0:2] = [front, back]
    kept_system = [tag for tag in origin.tags if tag.casefold() in ANKI_SYSTEM_TAGS]
    return NoteForExport(origin.note_type, fields, [*tags, *kept_system], None)


# Anki's own marks on a learner's note, not content: Anki drops them from a shared deck's export too.
ANKI_SYSTEM_TAGS = frozenset({"marked", "leech"})


def content_tags(tags: Iterable[str]) -> list[str]:
    """A note's tags as a card's: distinct, in their first order, without Anki's system tags; a tag too long
    for the schema is cut rather than losing the card."""
    return list(dict.fromkeys(tag[:100] for tag in tags if tag and tag.casefold() not in ANKI_SYSTEM_TAGS))
