"""Decks exported as Anki packages: what the notes hold, stable GUIDs, and the ways to download one."""

from __future__ import annotations

import io
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import genanki
import pytest
from django.core.management import call_command

from apps.content.models import Card, CardFormat, Concept, Deck
from apps.interchange.anki_export import NOTE_TYPE_ID, anki_deck_id, decks_anki_package
from apps.interchange.anki_package import AnkiPackage, anki_package_read
from tests.support.anki_packages import collection_edit

DECK = "tf-data-pipelines"


def _read(data: bytes) -> AnkiPackage:
    return anki_package_read(io.BytesIO(data))


@pytest.fixture
def deck(shipped_course) -> Deck:
    return Deck.objects.select_related("lesson__course").get(slug=DECK)


@pytest.fixture
def edited_cards(deck: Deck) -> list[Card]:
    """The deck's live cards, the first three edited to show each export rule."""
    cards = list(Card.objects.filter(deck=deck, archived=False).order_by("position"))
    first, second, third, fourth = cards[:4]
    Card.objects.filter(pk=first.pk).update(
        definition="Reads <files> & maps them", tags=["io", "tf-data::perf"], anki_guid="Anki!guid+1"
    )
    Card.objects.filter(pk=second.pk).update(
        format=CardFormat.HTML, definition="<b>Bold</b> and <i>kept</i>", example="<ul><li>one</li></ul>"
    )
    Card.objects.filter(pk=third.pk).update(archived=True)
    Card.objects.filter(pk=fourth.pk).update(
        definition="First line\nsecond line", code="for batch in dataset:\n    train_step(batch)"
    )
    return list(Card.objects.filter(deck=deck, archived=False).order_by("position"))


def test_every_live_card_is_one_note_on_the_sites_note_type(deck, edited_cards):
    package = _read(decks_anki_package(decks=[deck]))
    assert len(package.notes) == len(edited_cards) == len(package.cards)
    assert set(package.note_types) == {NOTE_TYPE_ID}
    assert package.note_types[NOTE_TYPE_ID].fields == ["Term", "Definition", "Example", "Code"]
    course = deck.lesson.course
    assert package.decks[anki_deck_id(course_slug=course.slug, deck_slug=deck.slug)] == f"{course.title}::{deck.title}"
    notes = {note.guid: note for note in package.notes}
    _first, second, *rest = edited_cards
    # A card from Anki keeps its note's GUID; the others get one made from their slugs.
    assert notes["Anki!guid+1"].fields[1] == "Reads &lt;files&gt; &amp; maps them"
    assert notes["Anki!guid+1"].tags == ["io", "tf-data::perf"]
    made = str(genanki.guid_for("quizsite", course.slug, deck.slug, second.slug))
    assert notes[made].fields[1:3] == ["<b>Bold</b> and <i>kept</i>", "<ul><li>one</li></ul>"]
    multi_line = notes[str(genanki.guid_for("quizsite", course.slug, deck.slug, rest[0].slug))]
    assert multi_line.fields[1] == "First line<br>second line"
    for card in rest:
        note = notes[str(genanki.guid_for("quizsite", course.slug, deck.slug, card.slug))]
        assert note.fields[0] == card.term.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert not any(note.fields[0] == Card.objects.get(deck=deck, archived=True).term for note in package.notes)


def test_an_export_made_again_names_the_same_notes_and_deck(deck, edited_cards):
    first, again = _read(decks_anki_package(decks=[deck])), _read(decks_anki_package(decks=[deck]))
    assert [note.guid for note in first.notes] == [note.guid for note in again.notes]
    assert first.decks == again.decks
    assert len({note.guid for note in first.notes}) == len(first.notes)


def test_the_export_command_writes_the_package(deck, tmp_path: Path):
    output = tmp_path / "deck.apkg"
    call_command("export_anki", "--deck", DECK, "-o", str(output), stdout=io.StringIO())
    assert len(_read(output.read_bytes()).notes) == Card.objects.filter(deck=deck, archived=False).count()


# --- the learner's download ---------------------------------------------------------------------------------


def test_a_learner_downloads_a_visible_deck_as_an_attachment(learner_client, deck):
    response = learner_client.get(f"/api/v1/decks/{DECK}/anki-package/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"] == f'attachment; filename="{DECK}.apkg"'
    assert len(_read(response.content).notes) == Card.objects.filter(deck=deck, archived=False).count()


def test_a_hidden_or_unknown_deck_is_a_404(learner_client, deck):
    Deck.objects.filter(pk=deck.pk).update(archived=True)
    for slug in (DECK, "no-such-deck"):
        response = learner_client.get(f"/api/v1/decks/{slug}/anki-package/")
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_a_deck_in_an_archived_course_is_a_404(learner_client, deck):
    deck.lesson.course.__class__.objects.filter(pk=deck.lesson.course_id).update(archived=True)
    assert learner_client.get(f"/api/v1/decks/{DECK}/anki-package/").status_code == 404


def test_the_download_needs_a_signed_in_learner(api_client, deck):
    response = api_client.get(f"/api/v1/decks/{DECK}/anki-package/")
    assert response.status_code in {401, 403} and "error" in response.json()


# --- the admin action -----------------------------------------------------------------------------------------


def test_the_admin_exports_the_chosen_decks_as_one_package(client, staff_user, deck):
    other = Deck.objects.create(lesson=deck.lesson, slug="second-deck", title="Second deck", position=99)
    only = Card.objects.create(deck=other, slug="only-card", term="Only", definition="The one card", position=1)
    # The course's rules, which the admin checks around every action, want each card in a concept.
    Concept.objects.filter(course=deck.lesson.course).earliest("position").cards.add(only)
    client.force_login(staff_user)
    url = "/admin/content/deck/"
    one = client.post(url, {"action": "anki_package_export", "index": 0, "_selected_action": [deck.pk]})
    assert one.status_code == 200 and one["Content-Disposition"] == f'attachment; filename="{DECK}.apkg"'
    assert len(_read(one.content).notes) == Card.objects.filter(deck=deck, archived=False).count()
    both = client.post(url, {"action": "anki_package_export", "index": 0, "_selected_action": [deck.pk, other.pk]})
    package = _read(both.content)
    assert both["Content-Disposition"] == 'attachment; filename="decks.apkg"'
    course = deck.lesson.course
    assert {
        anki_deck_id(course_slug=course.slug, deck_slug=deck.slug),
        anki_deck_id(course_slug=other.lesson.course.slug, deck_slug=other.slug),
    } <= set(package.decks)
    assert len(package.notes) == Card.objects.filter(deck__in=[deck, other], archived=False).count()


# --- round trip through the importer ----------------------------------------------------------------------------


def test_an_exported_deck_imports_back_with_the_same_fields_format_and_guids(deck, edited_cards):
    from apps.interchange.services import ImportSource, deck_import

    course = deck.lesson.course
    guids = {
        card.pk: card.anki_guid or str(genanki.guid_for("quizsite", course.slug, deck.slug, card.slug))
        for card in edited_cards
    }
    data = decks_anki_package(decks=[deck])
    deck_import(
        course=course,
        lesson=deck.lesson,
        deck_slug="round-trip",
        deck_title=None,
        source=ImportSource(name=f"{DECK}.apkg", file=io.BytesIO(data)),
        dry_run=False,
    )
    imported = {card.anki_guid: card for card in Card.objects.filter(deck__slug="round-trip", archived=False)}
    assert set(imported) == set(guids.values())
    for card in edited_cards:
        back = imported[guids[card.pk]]
        kept = ("term", "tags", "format", "definition", "example", "code")
        assert [getattr(back, name) for name in kept] == [getattr(card, name) for name in kept], card.slug
    # The importer's own reading of the same file.
    assert {note.guid for note in _read(data).notes} == set(guids.values())


def _note_edit_times(data: bytes) -> dict[str, int]:
    times: dict[str, int] = {}

    def read(connection: sqlite3.Connection) -> None:
        times.update(connection.execute("SELECT guid, mod FROM notes").fetchall())

    collection_edit(data, read)
    return times


def test_each_note_carries_its_own_cards_edit_time(deck, edited_cards):
    """Anki's default import updates a note only when the package's is newer: one edit here reaches one note."""
    course = deck.lesson.course
    first, second, *_ = edited_cards
    Card.objects.filter(deck=deck).update(updated_at=datetime(2026, 1, 5, 9, tzinfo=UTC))
    Card.objects.filter(pk=second.pk).update(updated_at=datetime(2026, 3, 1, 12, tzinfo=UTC))
    times = _note_edit_times(decks_anki_package(decks=[deck]))
    edited = str(genanki.guid_for("quizsite", course.slug, deck.slug, second.slug))
    assert times.pop(edited) == int(datetime(2026, 3, 1, 12, tzinfo=UTC).timestamp())
    assert set(times.values()) == {int(datetime(2026, 1, 5, 9, tzinfo=UTC).timestamp())}
    assert first.anki_guid in times


def test_a_native_decks_export_imported_into_that_deck_changes_nothing(deck):
    from apps.interchange.services import ImportSource, deck_import

    before = list(Card.objects.filter(deck=deck).order_by("pk").values())
    report = deck_import(
        course=deck.lesson.course,
        lesson=deck.lesson,
        deck_slug=deck.slug,
        deck_title=None,
        source=ImportSource(name=f"{DECK}.apkg", file=io.BytesIO(decks_anki_package(decks=[deck]))),
        dry_run=False,
    )
    assert (report.cards.created, report.cards.updated, report.cards.archived) == (0, 0, 0), report.lines()
    assert list(Card.objects.filter(deck=deck).order_by("pk").values()) == before
