"""Importing decks from Anki packages and CSV/TSV files through the course-file loader."""

from __future__ import annotations

import io
import re
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse

from apps.content.content_files.load import content_sources_load
from apps.content.content_files.source import ContentSource
from apps.content.models import Card, Concept, Course, Deck, Lesson
from apps.interchange.anki_export import decks_anki_package
from apps.interchange.anki_package import anki_package_read
from apps.interchange.models import MediaFile
from apps.interchange.services import (
    ImportFileInvalid,
    ImportRefused,
    ImportSource,
    anki_card_slug,
    deck_import,
)
from apps.srs.models import CardMemory, ReviewLog
from apps.srs.reviews.services import ReviewInput, review_submit
from tests.support import anki_packages
from tests.support.anki_packages import NoteSpec
from tests.support.course_files import CONTENT_MODELS, minimal_course, to_yaml

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path: Path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def course(db) -> Course:
    content_sources_load(sources=[ContentSource("course.yaml", to_yaml(minimal_course()))])
    return Course.objects.get(slug="pipelines-101")


@pytest.fixture
def lesson(course) -> Lesson:
    return Lesson.objects.get(slug="first-pipeline")


def row_counts() -> dict[str, int]:
    counts = {model.__name__: model._default_manager.count() for model in CONTENT_MODELS}
    counts["MediaFile"] = MediaFile.objects.count()
    counts["concept cards"] = Concept.cards.through.objects.count()
    return counts


def run_import(course, lesson, data: bytes, *, name: str = "vocab.apkg", dry_run: bool = False, deck: str = "vocab"):
    return deck_import(
        course=course,
        lesson=lesson,
        deck_slug=deck,
        deck_title=None,
        source=ImportSource(name=name, file=io.BytesIO(data)),
        dry_run=dry_run,
    )


def test_basic_and_reversed_notes_become_one_card_each_and_cloze_is_skipped(course, lesson):
    report = run_import(course, lesson, anki_packages.legacy_package())

    deck = Deck.objects.get(slug="vocab")
    assert deck.lesson == lesson and deck.title == "Vocabulary"
    cards = {card.anki_guid: card for card in deck.cards.all()}
    assert set(cards) == {"guid-basic-1", "guid-reversed-1"}
    basic = cards["guid-basic-1"]
    assert (basic.slug, basic.term, basic.definition, basic.format) == (
        anki_card_slug("guid-basic-1"),
        "prefetch",
        "Overlaps input and training",
        "text",
    )
    assert basic.tags == ["tf-data", "perf"]
    reversed_card = cards["guid-reversed-1"]
    assert reversed_card.format == "html"
    assert reversed_card.definition == "Randomises element order <i>within a buffer</i>"
    assert report.cards.created == 2
    ((skipped),) = report.skipped
    assert skipped.ref == "note guid-cloze-1" and "cloze" in skipped.reason
    assert any("guid-cloze-1" in line for line in report.lines())


def test_hostile_html_is_sanitized_to_the_allow_list(course, lesson):
    notes = [
        NoteSpec(
            "guid-html",
            [
                "<script>alert(1)</script><b>cache</b>",
                '<div onclick="steal()">Keeps <a href="javascript:x">elements</a> <img src="http://evil.example/x.png">'
                '<iframe src="https://evil.example"></iframe><span style="color:red">in memory</span></div>',
            ],
        )
    ]
    run_import(course, lesson, anki_packages.legacy_package(notes))
    card = Card.objects.get(anki_guid="guid-html")
    assert card.term == "cache"
    assert card.format == "html"
    # The image whose source was refused goes with it: an empty <img> would show nothing.
    assert card.definition == "<div>Keeps elements <span>in memory</span></div>"


def test_media_is_stored_and_served_from_the_url_in_the_definition(course, lesson, client):
    notes = [NoteSpec("guid-media", ["chart", 'Plot of loss <img src="loss chart.png"> [sound:say.mp3]'])]
    package = anki_packages.latest_package(
        notes, media={"loss chart.png": anki_packages.PNG_BYTES, "say.mp3": anki_packages.MP3_BYTES}
    )
    report = run_import(course, lesson, package)

    assert report.media_stored == 2 and MediaFile.objects.count() == 2
    card = Card.objects.get(anki_guid="guid-media")
    image_url, sound_url = re.findall(r'src="([^"]+)"', card.definition)
    assert "<audio" in card.definition and "controls" in card.definition
    response = client.get(image_url)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == anki_packages.PNG_BYTES
    assert response["Content-Type"] == "image/png"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == "sandbox"
    assert "immutable" in response["Cache-Control"]
    assert client.get(sound_url)["Content-Type"] == "audio/mpeg"
    assert client.get(image_url.replace(image_url.split("/")[2], "0" * 64)).status_code == 404


def test_media_travel_inside_an_export_under_their_names_and_come_back_unchanged(course, lesson):
    notes = [NoteSpec("guid-media", ["chart", 'Plot of loss <img src="loss chart.png"> [sound:say.mp3]'])]
    package = anki_packages.latest_package(
        notes, media={"loss chart.png": anki_packages.PNG_BYTES, "say.mp3": anki_packages.MP3_BYTES}
    )
    run_import(course, lesson, package)
    deck = Deck.objects.get(slug="vocab")
    before = list(Card.objects.filter(deck=deck).order_by("pk").values())

    exported = decks_anki_package(decks=[deck])
    read = anki_package_read(io.BytesIO(exported))
    assert read.media == {"loss chart.png": anki_packages.PNG_BYTES, "say.mp3": anki_packages.MP3_BYTES}
    (note,) = read.notes
    # As Anki keeps media: an image by its name in the media folder, a sound as [sound:name].
    assert note.fields[1] == 'Plot of loss <img src="loss chart.png"> [sound:say.mp3]'

    report = run_import(course, lesson, exported)
    assert (report.cards.created, report.cards.updated, report.cards.archived) == (0, 0, 0)
    assert list(Card.objects.filter(deck=deck).order_by("pk").values()) == before


def test_media_that_is_not_an_allowed_image_or_sound_is_not_stored(course, lesson):
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    notes = [NoteSpec("guid-svg", ["vector", 'A drawing <img src="d.svg">'])]
    report = run_import(course, lesson, anki_packages.legacy_package(notes, media={"d.svg": svg}))
    assert MediaFile.objects.count() == 0
    assert "d.svg" in report.media_refused[0]
    assert "svg" not in Card.objects.get(anki_guid="guid-svg").definition


def test_a_refused_image_or_sound_leaves_no_empty_element(course, lesson):
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"></svg>'
    notes = [
        NoteSpec(
            "guid-refused", ["vector", 'Drawn <img src="d.svg"> and said <audio src="s.svg"></audio> [sound:s.svg]']
        )
    ]
    run_import(course, lesson, anki_packages.legacy_package(notes, media={"d.svg": svg, "s.svg": svg}))
    definition = Card.objects.get(anki_guid="guid-refused").definition
    assert "<img" not in definition and "<audio" not in definition, definition
    assert definition.split() == ["Drawn", "and", "said"]


def test_ankis_system_tags_are_not_content(course, lesson):
    notes = [NoteSpec("guid-tagged", ["cache", "Keeps elements in memory"], tags=["marked", "Leech", "tf-data"])]
    run_import(course, lesson, anki_packages.legacy_package(notes))
    assert Card.objects.get(anki_guid="guid-tagged").tags == ["tf-data"]


def test_a_skip_message_names_the_rule_that_fired(course, lesson):
    notes = [
        NoteSpec("guid-words", ["batch size", "The size of each batch of samples"]),
        NoteSpec("guid-name", ["<code>tf.data.Dataset.prefetch()</code>", "Call prefetch to overlap the steps"]),
        NoteSpec("guid-good", ["cache", "Keeps elements in memory"]),
    ]
    report = run_import(course, lesson, anki_packages.legacy_package(notes))
    reasons = {skipped.ref: skipped.reason for skipped in report.skipped}
    assert reasons["note guid-words"].startswith("the back holds every word of the front ('batch size')")
    assert reasons["note guid-name"].startswith("the back holds 'prefetch', the name the front's code goes by")


def test_importing_the_same_package_again_changes_nothing(course, lesson):
    package = anki_packages.latest_package(media={"chart.png": anki_packages.PNG_BYTES})
    run_import(course, lesson, package)
    before = row_counts()
    cards_before = list(Card.objects.filter(deck__slug="vocab").values())

    report = run_import(course, lesson, package)

    assert (report.cards.created, report.cards.updated, report.cards.archived) == (0, 0, 0)
    assert report.cards.unchanged == 2 and report.changes == []
    assert not report.load.changed
    assert row_counts() == before
    assert list(Card.objects.filter(deck__slug="vocab").values()) == cards_before


def test_one_note_edited_and_one_removed_give_one_update_and_one_archive(course, lesson):
    run_import(course, lesson, anki_packages.legacy_package())
    edited = [NoteSpec("guid-basic-1", ["<b>prefetch</b>", "Prepares the next batch during training"], tags=["perf"])]

    report = run_import(course, lesson, anki_packages.legacy_package(edited))

    assert (report.cards.created, report.cards.updated, report.cards.archived) == (0, 1, 1)
    updated = Card.objects.get(anki_guid="guid-basic-1")
    assert updated.definition == "Prepares the next batch during training" and updated.tags == ["perf"]
    assert Card.objects.get(anki_guid="guid-reversed-1").archived is True
    assert Card.objects.filter(deck__slug="vocab").count() == 2


def test_a_dry_run_writes_nothing_but_reports_what_would_change(course, lesson):
    before = row_counts()
    report = run_import(
        course, lesson, anki_packages.latest_package(media={"a.png": anki_packages.PNG_BYTES}), dry_run=True
    )
    assert report.dry_run and report.cards.created == 2
    assert any("would be created" in line for line in report.lines())
    assert row_counts() == before


def test_learner_progress_on_a_card_survives_a_reimport(course, lesson, learner):
    run_import(course, lesson, anki_packages.legacy_package())
    card = Card.objects.get(anki_guid="guid-basic-1")
    review_submit(learner=learner, review=ReviewInput(card.pk, 3, uuid.uuid4(), NOW), now=NOW)
    edited = [
        NoteSpec("guid-basic-1", ["prefetch", "Prepares the next batch during training"]),
        NoteSpec("guid-reversed-1", ["shuffle", "Randomises element order"], kind="reversed"),
    ]
    run_import(course, lesson, anki_packages.legacy_package(edited))

    again = Card.objects.get(anki_guid="guid-basic-1")
    assert again.pk == card.pk and again.definition == "Prepares the next batch during training"
    assert CardMemory.objects.filter(learner=learner, card=again).exists()
    assert ReviewLog.objects.filter(learner=learner, card=again).count() == 1


def test_cards_join_concepts_named_by_their_tags_and_the_rest_join_the_decks_concept(course, lesson):
    notes = [
        NoteSpec("guid-tagged", ["interleave", "Reads several files at once"], tags=["Overlap"]),
        NoteSpec("guid-plain", ["repeat", "Starts the data over for another epoch"]),
    ]
    run_import(course, lesson, anki_packages.legacy_package(notes), name="epochs.apkg")
    overlap = Concept.objects.get(slug="overlap")
    assert overlap.cards.filter(anki_guid="guid-tagged").exists()
    deck_concept = Concept.objects.get(course=course, slug="vocab")
    assert deck_concept.name == "Vocabulary" and deck_concept.definition == "Cards imported from epochs.apkg."
    assert list(deck_concept.cards.values_list("anki_guid", flat=True)) == ["guid-plain"]


def test_notes_that_break_a_card_rule_are_skipped_and_listed(course, lesson):
    notes = [
        NoteSpec("guid-long", ["x" * 201, "Too long a front"]),
        NoteSpec("guid-empty", ["<img src='gone.png'>", "An image alone"]),
        NoteSpec("guid-giveaway", ["batch", "A batch of samples"]),
        NoteSpec("guid-good", ["cache", "Keeps elements in memory"]),
    ]
    report = run_import(course, lesson, anki_packages.legacy_package(notes))
    reasons = {skipped.ref: skipped.reason for skipped in report.skipped}
    assert "at most 200" in reasons["note guid-long"]
    assert "empty" in reasons["note guid-empty"]
    assert "gives" in reasons["note guid-giveaway"] or "give" in reasons["note guid-giveaway"]
    assert list(Card.objects.filter(deck__slug="vocab").values_list("anki_guid", flat=True)) == ["guid-good"]


def test_a_field_over_its_bound_skips_the_note_in_packages_and_tables(course, lesson):
    notes = [
        NoteSpec("guid-huge", ["cache", "x" * 5_000_000]),
        NoteSpec("guid-good", ["batch", "Stacks samples into groups"]),
    ]
    report = run_import(course, lesson, anki_packages.legacy_package(notes))
    reasons = {skipped.ref: skipped.reason for skipped in report.skipped}
    assert reasons["note guid-huge"] == (
        "the card's definition would be 5,000,000 characters; a card's definition holds at most 2,000"
    )
    assert list(Card.objects.filter(deck__slug="vocab").values_list("anki_guid", flat=True)) == ["guid-good"]

    table = "term,definition,example\ncache,Keeps elements,short\nmap,Applies a function," + "z" * 2_001 + "\n"
    report = run_import(course, lesson, table.encode(), name="rows.csv", deck="rows")
    assert [skipped.ref for skipped in report.skipped] == ["line 3"]
    assert (
        report.skipped[0].reason == "the card's example would be 2,001 characters; a card's example holds at most 2,000"
    )


def test_the_admin_holds_a_card_to_the_same_bounds(course):
    card = Card.objects.filter(deck__lesson__course=course).first()
    assert card is not None
    card.definition = "x" * 2_001
    with pytest.raises(ValidationError) as caught:
        card.full_clean()
    assert "definition" in caught.value.message_dict


def test_a_package_of_only_cloze_notes_is_refused_and_writes_nothing(course, lesson):
    before = row_counts()
    with pytest.raises(ImportRefused, match="No card could be imported"):
        run_import(course, lesson, anki_packages.legacy_package([NoteSpec("c", ["{{c1::x}} y", ""], kind="cloze")]))
    assert row_counts() == before


@pytest.mark.parametrize(
    "build",
    [
        anki_packages.zip_bomb_package,
        lambda: anki_packages.traversal_package("../../etc/passwd"),
        anki_packages.corrupt_collection_package,
        anki_packages.unknown_note_type_package,
        anki_packages.not_a_zip_package,
    ],
)
def test_hostile_packages_are_refused_and_write_nothing(course, lesson, build):
    before = row_counts()
    with pytest.raises(ImportFileInvalid) as caught:
        run_import(course, lesson, build())
    assert caught.value.status_code == 400 and caught.value.code == "invalid_package"
    assert row_counts() == before


def test_a_package_over_the_size_setting_is_a_413(course, lesson, settings):
    settings.ANKI_PACKAGE_MAX_BYTES = 1000
    with pytest.raises(Exception) as caught:
        run_import(course, lesson, anki_packages.legacy_package())
    assert getattr(caught.value, "status_code", None) == 413


def test_a_deck_of_another_lesson_is_refused(course, lesson):
    other = Lesson.objects.create(course=course, slug="second", title="Second", position=5)
    with pytest.raises(Exception, match="belongs to lesson 'first-pipeline'"):
        run_import(course, other, anki_packages.legacy_package(), deck="basics")


# --- CSV / TSV ----------------------------------------------------------------------------------------------


def test_csv_rows_become_cards_through_the_same_path(course, lesson):
    table = (
        "\ufeffterm,definition,example,tags\n"
        "interleave,Reads several files at once,ds.interleave(...),Overlap io\n"
        "repeat,Starts the data over,,\n"
        ",no term here,,\n"
    )
    report = run_import(course, lesson, table.encode(), name="words.csv", deck="words")
    cards = {card.slug: card for card in Card.objects.filter(deck__slug="words")}
    assert set(cards) == {"interleave", "repeat"}
    assert cards["interleave"].example == "ds.interleave(...)" and cards["interleave"].tags == ["Overlap", "io"]
    assert Concept.objects.get(slug="overlap").cards.filter(pk=cards["interleave"].pk).exists()
    assert [skipped.ref for skipped in report.skipped] == ["line 4"]

    again = run_import(course, lesson, table.encode(), name="words.csv", deck="words")
    assert again.cards.unchanged == 2 and again.changes == []


def test_tsv_with_a_slug_column_updates_by_slug(course, lesson):
    first = "slug\tterm\tdefinition\nrep\trepeat\tStarts the data over\n"
    run_import(course, lesson, first.encode(), name="words.tsv", deck="words")
    second = "slug\tterm\tdefinition\nrep\trepeat\tIterates again from the start\n"
    report = run_import(course, lesson, second.encode(), name="words.tsv", deck="words")
    assert report.cards.updated == 1
    assert Card.objects.get(deck__slug="words", slug="rep").definition == "Iterates again from the start"


def test_a_malformed_table_is_refused_naming_the_line(course, lesson):
    before = row_counts()
    with pytest.raises(ImportFileInvalid, match=r"words.csv:3: 3 column\(s\)"):
        run_import(course, lesson, b"term,definition\na,b\nc,d,e\n", name="words.csv", deck="words")
    assert row_counts() == before


# --- the admin page and the command ----------------------------------------------------------------------------


def admin_import(client, course, lesson, data: bytes, *, name: str = "vocab.apkg", dry_run: bool = False):
    upload = io.BytesIO(data)
    upload.name = name
    form = {"course": course.pk, "lesson": lesson.pk, "deck_slug": "vocab", "deck_title": "", "file": upload}
    if dry_run:
        form["dry_run"] = "on"
    return client.post(reverse("admin:content_deck_import_anki"), form)


def test_the_deck_changelist_links_to_the_import_page(staff_client, course):
    response = staff_client.get(reverse("admin:content_deck_changelist"))
    assert reverse("admin:content_deck_import_anki").encode() in response.content


def test_the_admin_page_imports_and_shows_the_report(staff_client, course, lesson):
    response = admin_import(staff_client, course, lesson, anki_packages.legacy_package())
    assert response.status_code == 200
    assert Card.objects.filter(deck__slug="vocab").count() == 2
    assert b"guid-cloze-1" in response.content and b"2 created" in response.content


def test_the_admin_page_validates_only_when_asked(staff_client, course, lesson):
    before = row_counts()
    response = admin_import(staff_client, course, lesson, anki_packages.legacy_package(), dry_run=True)
    assert response.status_code == 200 and b"would be created" in response.content
    assert row_counts() == before


def test_a_hostile_package_through_the_admin_is_a_clear_4xx_and_writes_nothing(staff_client, course, lesson):
    before = row_counts()
    response = admin_import(staff_client, course, lesson, anki_packages.traversal_package("../../etc/passwd"))
    assert response.status_code == 400
    assert b"contains a path separator" in response.content and b"Nothing was written" in response.content
    assert row_counts() == before


def test_the_admin_form_refuses_a_file_over_the_size_setting(staff_client, course, lesson, settings):
    settings.ANKI_PACKAGE_MAX_BYTES = 1000
    response = admin_import(staff_client, course, lesson, anki_packages.legacy_package())
    assert response.status_code == 400 and b"at most 1,000 are accepted" in response.content
    assert not Deck.objects.filter(slug="vocab").exists()


def test_the_admin_page_needs_add_and_change_permission(client, course, django_user_model):
    user = django_user_model.objects.create_user(username="viewer", password="long enough passphrase", is_staff=True)
    client.force_login(user)
    assert client.get(reverse("admin:content_deck_import_anki")).status_code == 403


def test_the_command_imports_and_prints_the_report(course, lesson, tmp_path: Path):
    path = tmp_path / "vocab.apkg"
    path.write_bytes(anki_packages.legacy_package())
    out = io.StringIO()
    call_command("import_deck", str(path), course="pipelines-101", lesson="first-pipeline", deck="vocab", stdout=out)
    assert "2 created" in out.getvalue() and "guid-cloze-1" in out.getvalue()
    assert Card.objects.filter(deck__slug="vocab").count() == 2


def test_the_command_dry_run_writes_nothing(course, lesson, tmp_path: Path):
    path = tmp_path / "words.csv"
    path.write_text("term,definition\nrepeat,Starts the data over\n", encoding="utf-8")
    before = row_counts()
    out = io.StringIO()
    call_command(
        "import_deck", str(path), course="pipelines-101", lesson="first-pipeline", deck="w", dry_run=True, stdout=out
    )
    assert "would be created" in out.getvalue()
    assert row_counts() == before


def test_a_hostile_package_through_the_command_fails_and_writes_nothing(course, lesson, tmp_path: Path):
    path = tmp_path / "bomb.apkg"
    path.write_bytes(anki_packages.zip_bomb_package())
    before = row_counts()
    with pytest.raises(CommandError, match="decompression bomb"):
        call_command("import_deck", str(path), course="pipelines-101", lesson="first-pipeline", deck="vocab")
    assert row_counts() == before
