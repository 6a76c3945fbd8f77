"""Importing a deck from an Anki package or a CSV/TSV file, through the course-file loader's rules and writer."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import Any, BinaryIO

from django.conf import settings
from django.db import transaction
from django.utils.text import slugify
from pydantic import ValidationError

from apps.common.errors import DomainError, RequestTooLarge
from apps.content.bounds import CARD_FIELD_MAX_CHARS, CARD_TERM_MAX_CHARS
from apps.content.content_files.export import course_doc_build
from apps.content.content_files.load import content_docs_load
from apps.content.content_files.report import LoadReport, ModelCounts, ReportItem
from apps.content.content_files.schema import SLUG_PATTERN, CourseDoc
from apps.content.content_files.source import ContentFilesInvalid
from apps.content.content_files.validate import term_in_definition
from apps.content.models import Card, Course, Deck, Lesson
from apps.content.text import authored_line, authored_text
from apps.interchange.anki_export import FIELD_NAMES, NOTE_TYPE_ID, anki_note_guid
from apps.interchange.anki_origins import content_tags, note_origins_store
from apps.interchange.anki_package import AnkiPackage, AnkiPackageInvalid, PackageLimits, anki_package_read
from apps.interchange.card_html import CardFormat, card_text, plain_line, plain_text
from apps.interchange.media import media_files_store, media_kind_sniff, media_sha256, media_url
from apps.interchange.tabular import TabularInvalid, TabularLimits, TabularRow, tabular_delimiter, tabular_read

ANKI_SUFFIXES = (".apkg", ".colpkg")
# The longest a card's term may be (CardDoc's Title) and an Anki GUID the cards table keeps.
GUID_MAX_CHARS = 100
SLUG_MAX_CHARS = 80
# How much of a note's front a report shows to name it.
LABEL_MAX_CHARS = 60
# Errors from the loader listed in one refusal; the rest are counted.
LISTED_ERRORS = 10
_SLUG = re.compile(SLUG_PATTERN)


class ImportFileInvalid(DomainError):
    """The uploaded file cannot be read as a deck: a damaged or hostile package, or a malformed table."""

    code = "invalid_package"


class ImportRefused(DomainError):
    """The file was read, but the course would break the content rules with it; nothing was written."""

    code = "invalid_import"


@dataclass(frozen=True)
class ImportSource:
    """The file to import: its name (the suffix picks the reader) and its bytes."""

    name: str
    file: BinaryIO


@dataclass(frozen=True)
class SkippedNote:
    """A note or row that became no card: which one ("note <guid>", "line 7"), its front, and why."""

    ref: str
    label: str
    reason: str

    def text(self) -> str:
        label = f" “{self.label}”" if self.label else ""
        return f"{self.ref}{label}: {self.reason}"


@dataclass(frozen=True)
class ImportedCard:
    slug: str
    term: str
    definition: str
    example: str
    format: CardFormat
    tags: list[str]
    anki_guid: str
    media: frozenset[str] = frozenset()
    # None keeps the code listing an author wrote here; only this site's own note type carries one.
    code: str | None = None


@dataclass
class ImportReport:
    source: str
    course: str
    lesson: str
    deck: str
    dry_run: bool
    notes: int
    cards: ModelCounts
    changes: list[ReportItem]
    skipped: list[SkippedNote]
    media_stored: int = 0
    media_refused: list[str] = field(default_factory=list)
    load: LoadReport | None = None

    def lines(self) -> list[str]:
        verb = "would be " if self.dry_run else ""
        lines = [
            f"{'Dry run: ' if self.dry_run else ''}{self.source} into deck {self.deck!r} "
            f"(course {self.course!r}, lesson {self.lesson!r}): {self.notes} note(s) read.",
            f"Cards: {self.cards.text(dry_run=self.dry_run)}.",
        ]
        lines += [f"  {item.text(dry_run=self.dry_run)}" for item in self.changes]
        if self.skipped:
            lines.append(f"Skipped {len(self.skipped)} note(s):")
            lines += [f"  {skipped.text()}" for skipped in self.skipped]
        if self.media_stored:
            lines.append(f"Media: {self.media_stored} new file(s) {verb}stored.")
        if self.media_refused:
            lines.append(f"Media not kept: {'; '.join(self.media_refused)}.")
        if self.load is not None:
            lines += [
                f"Also {name}: {counts.text(dry_run=self.dry_run)}."
                for name, counts in self.load.counts.items()
                if name != "cards" and counts.changed
            ]
        return lines


def deck_import(
    *, course: Course, lesson: Lesson, deck_slug: str, deck_title: str | None, source: ImportSource, dry_run: bool
) -> ImportReport:
    """Make the deck hold the file's cards (creating the deck if new); cards it held that the file lacks are archived.

    Anki notes are matched by GUID and CSV rows by slug, so importing the same file again changes nothing.
    With dry_run the report says what would change and nothing is written.
    """
    if lesson.course_id != course.pk:
        raise DomainError(
            f"Lesson {lesson.slug!r} is not part of course {course.slug!r}.", fields={"lesson": ["Not in this course."]}
        )
    if not _SLUG.match(deck_slug) or len(deck_slug) > SLUG_MAX_CHARS:
        raise DomainError(
            f"{deck_slug!r} is not a deck slug: lower-case letters and digits in words joined by single hyphens.",
            fields={"deck": ["Not a slug."]},
        )
    existing = Deck.objects.filter(slug=deck_slug).select_related("lesson__course").first()
    if existing is not None and existing.lesson_id != lesson.pk:
        raise DomainError(
            f"Deck {deck_slug!r} belongs to lesson {existing.lesson.slug!r} of course "
            f"{existing.lesson.course.slug!r}; import into that lesson or choose another deck slug.",
            fields={"deck": ["Belongs to another lesson."]},
        )
    size = _size(source.file)
    if size > settings.ANKI_PACKAGE_MAX_BYTES:
        raise RequestTooLarge(
            f"{source.name} is {size:,} bytes, over the import limit of {settings.ANKI_PACKAGE_MAX_BYTES:,} bytes."
        )

    known_by_guid = dict(
        existing.cards.exclude(anki_guid="").values_list("anki_guid", "slug") if existing is not None else []
    )
    # The deck's own cards went out under GUIDs made from their slugs; coming back, they are those cards.
    native_by_guid = (
        {
            anki_note_guid(card=card, course_slug=course.slug, deck_slug=deck_slug): card.slug
            for card in existing.cards.filter(anki_guid="").only("slug", "anki_guid")
        }
        if existing is not None
        else {}
    )
    suffix = PurePath(source.name).suffix.lower()
    media: dict[str, bytes] = {}
    media_refused: list[str] = []
    package: AnkiPackage | None = None
    if suffix in ANKI_SUFFIXES:
        package = _package_read(source)
        media, media_refused = _media_accepted(package.media)
        cards, skipped = _cards_from_package(
            package, media=media, known_by_guid=known_by_guid, native_by_guid=native_by_guid
        )
        default_title = _package_deck_name(package) or PurePath(source.name).stem
        notes = len(package.notes)
    elif tabular_delimiter(source.name) is not None:
        rows = _rows_read(source)
        cards, skipped = _cards_from_rows(rows)
        default_title = PurePath(source.name).stem
        notes = len(rows)
    else:
        raise ImportFileInvalid(f"{source.name} is not an Anki package (.apkg, .colpkg) or a .csv, .tsv or .txt file.")
    if not cards:
        reasons = Counter(skipped_note.reason for skipped_note in skipped)
        summary = "; ".join(f"{count} note(s): {reason}" for reason, count in reasons.most_common(5))
        raise ImportRefused(f"No card could be imported from {source.name} ({notes} note(s) read). {summary}".strip())

    used_media = {name: media[name] for card in cards for name in card.media if name in media}
    title = deck_title or (existing.title if existing is not None else default_title)
    with transaction.atomic():
        # One import or load of a course at a time: each rebuilds the whole course from what is stored.
        locked = Course.objects.select_for_update().get(pk=course.pk)
        doc = _course_doc_with_deck(
            course=locked,
            lesson=lesson,
            deck_slug=deck_slug,
            deck_title=authored_line(title)[:CARD_TERM_MAX_CHARS],
            cards=cards,
            source_name=source.name,
        )
        stored = 0 if dry_run else media_files_store(files=used_media)
        try:
            load = content_docs_load(docs=[doc], dry_run=dry_run)
        except ContentFilesInvalid as exc:
            listed = "; ".join(
                error.message if not error.path else f"{error.path}: {error.message}"
                for error in exc.errors[:LISTED_ERRORS]
            )
            more = f" (and {len(exc.errors) - LISTED_ERRORS} more)" if len(exc.errors) > LISTED_ERRORS else ""
            raise ImportRefused(f"The course would break its content rules with this import: {listed}{more}") from exc
        if package is not None and not dry_run:
            imported_guids = [card.anki_guid for card in cards if card.anki_guid]
            note_origins_store(
                cards=Card.objects.filter(deck__slug=deck_slug, anki_guid__in=imported_guids),
                package=package,
                skip_note_type_ids={NOTE_TYPE_ID},
            )

    imported = {f"{deck_slug}/{card.slug}" for card in cards}
    changes = [
        # The deck's cards the file lacks are written archived, which the loader reports as an update of that field.
        replace(item, action="archived", fields=[])
        if item.path not in imported and item.action == "updated" and "archived" in item.fields
        else item
        for item in load.items
        if item.group == "cards" and item.path.startswith(f"{deck_slug}/")
    ]
    counts = ModelCounts()
    for item in changes:
        setattr(counts, item.action, getattr(counts, item.action) + 1)
    counts.unchanged = len(cards) - counts.created - counts.updated
    return ImportReport(
        source=source.name,
        course=course.slug,
        lesson=lesson.slug,
        deck=deck_slug,
        dry_run=dry_run,
        notes=notes,
        cards=counts,
        changes=changes,
        skipped=skipped,
        media_stored=stored,
        media_refused=media_refused,
        load=load,
    )


def _size(file: BinaryIO) -> int:
    start = file.tell()
    end = file.seek(0, 2)
    file.seek(start)
    return end - start


def _package_read(source: ImportSource) -> AnkiPackage:
    try:
        return anki_package_read(source.file, limits=PackageLimits(package_bytes=settings.ANKI_PACKAGE_MAX_BYTES))
    except AnkiPackageInvalid as exc:
        raise ImportFileInvalid(f"{source.name}: {exc.message}") from exc


def _rows_read(source: ImportSource) -> list[TabularRow]:
    try:
        return tabular_read(
            source.file, name=source.name, limits=TabularLimits(file_bytes=settings.ANKI_PACKAGE_MAX_BYTES)
        )
    except TabularInvalid as exc:
        raise ImportFileInvalid(exc.message) from exc


def _media_accepted(media: dict[str, bytes]) -> tuple[dict[str, bytes], list[str]]:
    accepted: dict[str, bytes] = {}
    refused: list[str] = []
    for name, data in media.items():
        if media_kind_sniff(data) is None:
            refused.append(f"{name} (not a PNG, JPEG, GIF or WebP image, nor MP3, Ogg or WAV sound)")
        else:
            accepted[name] = data
    return accepted, refused


def _package_deck_name(package: AnkiPackage) -> str:
    """The last part of the name of the deck most cards are in ("Vocabulary" of "Languages::Vocabulary")."""
    counts = Counter(card.deck_id for card in package.cards)
    for deck_id, _ in counts.most_common():
        name = package.decks.get(deck_id, "")
        if name:
            return name.split("::")[-1].strip()
    return ""


def _card_problem(term: str, definition: str, *, example: str = "", code: str = "") -> str | None:
    """Why a front and back make no card here; the loader applies the same rules."""
    if not term:
        return "the front is empty once markup is removed"
    if not definition:
        return "the back is empty"
    for name, value in (("term", term), ("definition", definition), ("example", example), ("code", code)):
        bound = CARD_FIELD_MAX_CHARS[name]
        if len(value) > bound:
            return f"the card's {name} would be {len(value):,} characters; a card's {name} holds at most {bound:,}"
    given_away = term_in_definition(term, definition)
    if given_away == term:
        return f"the back holds every word of the front ({term!r}), which would give the answer away in Match the Pairs"
    if given_away is not None:
        return (
            f"the back holds {given_away!r}, the name the front's code goes by, which would give the answer away "
            "in Match the Pairs"
        )
    return None


def _label(value: str) -> str:
    text = plain_line(value)
    return text if len(text) <= LABEL_MAX_CHARS else f"{text[: LABEL_MAX_CHARS - 1]}…"


def anki_card_slug(guid: str) -> str:
    """A card's slug from its note's GUID: stable across imports, whatever characters the GUID holds."""
    return f"anki-{hashlib.sha1(guid.encode(), usedforsecurity=False).hexdigest()[:16]}"


def _cards_from_package(
    package: AnkiPackage, *, media: dict[str, bytes], known_by_guid: dict[str, str], native_by_guid: dict[str, str]
) -> tuple[list[ImportedCard], list[SkippedNote]]:
    urls = {name: media_url(sha256=media_sha256(data), name=name) for name, data in media.items()}
    cards: list[ImportedCard] = []
    skipped: list[SkippedNote] = []
    seen: set[str] = set()
    for note in package.notes:
        note_type = package.note_types[note.note_type_id]
        front = note.fields[0] if note.fields else ""

        def skip(reason: str, *, front: str = front, guid: str = note.guid) -> None:
            skipped.append(SkippedNote(f"note {guid}", _label(front), reason))

        if note_type.kind == "cloze":
            skip(f"a cloze note ({note_type.name}); cards here have no cloze kind")
            continue
        if not note.guid or len(note.guid) > GUID_MAX_CHARS:
            skip(f"the note's GUID is empty or longer than {GUID_MAX_CHARS} characters")
            continue
        if note.guid in seen:
            skip("an earlier note has the same GUID")
            continue
        seen.add(note.guid)
        if len(note.fields) < 2:
            skip(f"note type {note_type.name!r} has no second field for the back")
            continue
        term = authored_line(plain_line(front))
        own_type = tuple(note_type.fields[: len(FIELD_NAMES)]) == FIELD_NAMES
        # A package exported here comes back field for field: Example is the example, Code the code.
        extras = note.fields[2:3] if own_type else note.fields[2:]
        text = card_text(definition=note.fields[1], extras=extras, media_urls=urls)
        definition, example = authored_text(text.definition), authored_text(text.example)
        code = authored_text(plain_text(note.fields[3])) if own_type and len(note.fields) > 3 else None
        problem = _card_problem(term, definition, example=example, code=code or "")
        if problem is not None:
            skip(problem)
            continue
        native_slug = native_by_guid.get(note.guid)
        cards.append(
            ImportedCard(
                slug=native_slug or known_by_guid.get(note.guid) or anki_card_slug(note.guid),
                term=term,
                definition=definition,
                example=example,
                format=text.format,
                tags=content_tags(note.tags),
                anki_guid="" if native_slug else note.guid,
                media=text.media,
                code=code,
            )
        )
    return cards, skipped


def _term_slug(term: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", slugify(term)).strip("-")[:SLUG_MAX_CHARS].strip("-")
    return slug or f"card-{hashlib.sha1(term.encode(), usedforsecurity=False).hexdigest()[:12]}"


def _cards_from_rows(rows: list[TabularRow]) -> tuple[list[ImportedCard], list[SkippedNote]]:
    cards: list[ImportedCard] = []
    skipped: list[SkippedNote] = []
    first_line: dict[str, int] = {}
    for row in rows:
        label = _label(row.term)
        if row.slug and (not _SLUG.match(row.slug) or len(row.slug) > SLUG_MAX_CHARS):
            skipped.append(SkippedNote(f"line {row.line}", label, f"{row.slug!r} is not a slug"))
            continue
        term = authored_line(plain_line(row.term))
        text = card_text(definition=row.definition, extras=[row.example], media_urls={})
        definition, example = authored_text(text.definition), authored_text(text.example)
        problem = _card_problem(term, definition, example=example)
        if problem is not None:
            skipped.append(SkippedNote(f"line {row.line}", label, problem))
            continue
        slug = row.slug or _term_slug(term)
        if slug in first_line:
            skipped.append(
                SkippedNote(f"line {row.line}", label, f"line {first_line[slug]} has the same slug {slug!r}")
            )
            continue
        first_line[slug] = row.line
        cards.append(
            ImportedCard(
                slug=slug,
                term=term,
                definition=definition,
                example=example,
                format=text.format,
                tags=content_tags(row.tags),
                anki_guid="",
            )
        )
    return cards, skipped


def _course_doc_with_deck(
    *, course: Course, lesson: Lesson, deck_slug: str, deck_title: str, cards: list[ImportedCard], source_name: str
) -> CourseDoc:
    """The course as stored, with the deck's cards replaced by the imported ones and every live card in a concept."""
    data = course_doc_build(course=course).model_dump(mode="json")
    lesson_data = next(item for item in data["lessons"] if item["slug"] == lesson.slug)
    deck_data = next((item for item in lesson_data["decks"] if item["slug"] == deck_slug), None)
    if deck_data is None:
        deck_data = {"slug": deck_slug, "title": deck_title, "description": "", "archived": False, "cards": []}
        lesson_data["decks"].append(deck_data)
    deck_data["title"] = deck_title
    deck_data["archived"] = False

    current = {card["slug"]: card for card in deck_data["cards"]}
    imported_slugs = {card.slug for card in cards}
    deck_data["cards"] = [
        {
            "slug": card.slug,
            "term": card.term,
            "definition": card.definition,
            "example": card.example,
            # Only packages exported from here carry a code listing; otherwise the one an author wrote stays.
            "code": card.code if card.code is not None else current.get(card.slug, {}).get("code", ""),
            "format": card.format,
            "tags": card.tags,
            "anki_guid": card.anki_guid or current.get(card.slug, {}).get("anki_guid", ""),
            "archived": False,
        }
        for card in cards
    ] + [{**card, "archived": True} for slug, card in current.items() if slug not in imported_slugs]

    _concepts_join(data, deck_slug=deck_slug, deck_title=deck_title, cards=cards, source_name=source_name)
    try:
        return CourseDoc.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, error['loc']))}: {error['msg']}"
            for error in exc.errors(include_url=False)[:LISTED_ERRORS]
        )
        raise ImportRefused(f"The imported cards do not fit the course format: {problems}") from exc


def _concepts_join(
    data: dict[str, Any], *, deck_slug: str, deck_title: str, cards: list[ImportedCard], source_name: str
) -> None:
    """A card joins the live concepts named by its tags; one that joins none and is in none joins the deck's concept.

    Memberships are only added, never removed, so an author's own linking survives a re-import.
    """
    concepts: dict[str, dict[str, Any]] = {concept["slug"]: concept for concept in data["concepts"]}
    covered = {ref for concept in data["concepts"] for ref in concept["cards"]}
    for card in cards:
        ref = f"{deck_slug}/{card.slug}"
        tagged = [
            concepts[slug]
            for slug in dict.fromkeys(slugify(tag) for tag in card.tags)
            if slug in concepts and not concepts[slug]["archived"]
        ]
        if not tagged and ref not in covered:
            tagged = [
                _deck_concept(data, concepts, deck_slug=deck_slug, deck_title=deck_title, source_name=source_name)
            ]
        for concept in tagged:
            if ref not in concept["cards"]:
                concept["cards"].append(ref)


def _deck_concept(
    data: dict[str, Any], concepts: dict[str, dict[str, Any]], *, deck_slug: str, deck_title: str, source_name: str
) -> dict[str, Any]:
    concept = concepts.get(deck_slug)
    if concept is None:
        concept = {
            "slug": deck_slug,
            "name": deck_title,
            "definition": f"Cards imported from {source_name}.",
            "cards": [],
            "archived": False,
        }
        data["concepts"].append(concept)
        concepts[deck_slug] = concept
    # The imported cards need a live concept; an archived one of the deck's name comes back for them.
    concept["archived"] = False
    return concept
