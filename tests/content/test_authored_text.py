"""The authored-text rule, and every way in applying it: model fields, admin form fields, course files, export."""

from __future__ import annotations

import importlib
import io
import json
import random

import pytest
import yaml
from django.apps import apps as django_apps
from django.core.management import call_command
from django.db import connection

from apps.content.content_files.export import course_doc_build, course_doc_to_yaml
from apps.content.content_files.load import content_sources_load
from apps.content.content_files.source import ContentFilesInvalid, ContentSource
from apps.content.fields import AuthoredLineFormField, AuthoredTextFormField
from apps.content.models import Card, Course, Deck, LessonBlock
from apps.content.text import authored_line, authored_text
from tests.support.course_files import minimal_course, to_yaml

# --- The rule ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("Stack samples\r\ninto groups\r\n", "Stack samples\ninto groups"),
        ("old Mac\rline ends\r", "old Mac\nline ends"),
        ("trailing blanks   \nand tabs\t\t\n", "trailing blanks\nand tabs"),
        ("\n\n  \nfirst real line\n\n\n", "first real line"),
        ("a\n\n\nb", "a\n\n\nb"),
        ("    indented = True\n    kept()\n", "    indented = True\n    kept()"),
        ("\n\n    def f():\n        return 1\n\n", "    def f():\n        return 1"),
        ("   \t \r\n  ", ""),
        ("", ""),
        ("no\u00a0break\u00a0", "no\u00a0break\u00a0"),
    ],
)
def test_authored_text_normalizes_line_ends_trailing_blanks_and_blank_edges(written, stored):
    assert authored_text(written) == stored


@pytest.mark.parametrize(
    ("written", "stored"),
    [("  map  ", "map"), ("\tbatch\r\n", "batch"), ("two  words", "two  words"), ("   ", "")],
)
def test_authored_line_strips_surrounding_whitespace(written, stored):
    assert authored_line(written) == stored


def test_both_rules_are_idempotent_on_random_text():
    generator = random.Random(20261201)  # noqa: S311 - seeded fuzz, not a secret
    alphabet = ["a", "b", " ", "\t", "\n", "\r", "\r\n", "\u00a0", "x = 1", "    "]
    for _ in range(2000):
        text = "".join(generator.choice(alphabet) for _ in range(generator.randint(0, 30)))
        once = authored_text(text)
        assert authored_text(once) == once, repr(text)
        assert "\r" not in once
        assert not once.endswith("\n")
        assert all(line == line.rstrip(" \t") for line in once.split("\n"))
        assert authored_line(authored_line(text)) == authored_line(text)


# --- Form fields: a browser's CRLF is no change --------------------------------------------------


def test_text_form_field_sees_a_browsers_crlf_as_no_change():
    field = AuthoredTextFormField(required=False)
    stored = "line one\n  line two"
    assert not field.has_changed(stored, "line one\r\n  line two\r\n")
    assert field.has_changed(stored, "line one\r\n  line 2")
    assert field.clean("\r\n  code()\r\n") == "  code()"


def test_line_form_field_strips_and_sees_padding_as_no_change():
    field = AuthoredLineFormField(max_length=200)
    assert field.clean("  Prefetch ") == "Prefetch"
    assert not field.has_changed("Prefetch", " Prefetch  ")


# --- Model fields: the database holds normalized text however it is written ----------------------


@pytest.mark.django_db
def test_model_fields_store_normalized_text_on_save_and_update(shipped_course):
    card = Card.objects.order_by("pk")[0]
    card.term = "  padded term "
    card.definition = "Line one  \r\nline two\r\n\r\n"
    card.code = "\n    x = 1\r\n    y = 2\n"
    card.save()
    card.refresh_from_db()
    assert (card.term, card.definition, card.code) == ("padded term", "Line one\nline two", "    x = 1\n    y = 2")

    Card.objects.filter(pk=card.pk).update(example="  an example  \r\n")
    card.refresh_from_db()
    assert card.example == "  an example"


# --- Course files --------------------------------------------------------------------------------


def _load(document: dict) -> None:
    content_sources_load(sources=[ContentSource("course.yaml", to_yaml(document))])


@pytest.mark.django_db
def test_course_files_load_normalized_text():
    document = minimal_course()
    card = document["lessons"][0]["decks"][0]["cards"][0]
    card["term"] = "  map "
    card["definition"] = "Transform elements  \n\n"
    card["code"] = "\n  ds.map(fn)  \n"
    document["lessons"][0]["sections"][0]["blocks"][0]["text"] = "Input pipelines \nfeed the accelerator.\n"
    _load(document)

    stored = Card.objects.get(slug="map")
    assert (stored.term, stored.definition, stored.code) == ("map", "Transform elements", "  ds.map(fn)")
    block = Course.objects.get().lessons.get().sections.get().blocks.order_by("position")[0]
    assert block.payload == {"text": "Input pipelines\nfeed the accelerator."}


@pytest.mark.django_db
def test_a_whitespace_only_definition_is_an_error():
    document = minimal_course()
    document["lessons"][0]["decks"][0]["cards"][0]["definition"] = "  \n\t\n"
    with pytest.raises(ContentFilesInvalid) as caught:
        _load(document)
    assert any(
        error.path.endswith("cards[0].definition") and "at least 1 character" in error.message
        for error in caught.value.errors
    )


@pytest.mark.django_db
def test_export_writes_multi_line_text_as_literal_blocks(shipped_course):
    text = course_doc_to_yaml(course_doc_build(course=Course.objects.get()))
    assert ": |-\n" in text
    # No escaped line breaks: every multi-line text is a literal block.
    assert "\\n" not in text
    multi_line = Card.objects.exclude(definition__regex=r"^[^\n]*$").first()
    assert multi_line is not None, "the shipped course has a multi-line definition"


@pytest.mark.django_db
def test_the_shipped_course_exported_loads_back_unchanged(shipped_course, tmp_path):
    call_command("export_decks", output=tmp_path, stdout=io.StringIO())
    exported = (tmp_path / "tensorflow-ai-phd.yaml").read_text(encoding="utf-8")
    assert yaml.safe_load(exported)["slug"] == "tensorflow-ai-phd"
    out = io.StringIO()
    call_command("load_decks", str(tmp_path), dry_run=True, stdout=out)
    assert "no changes" in out.getvalue(), out.getvalue()


@pytest.mark.django_db
def test_deck_description_from_the_shipped_file_has_no_trailing_newline(shipped_course):
    assert all(not deck.description.endswith("\n") for deck in Deck.objects.all())
    assert all(not card.definition.endswith("\n") for card in Card.objects.all())


# --- The migration that normalizes existing rows -----------------------------------------------------


@pytest.mark.django_db
def test_the_migration_normalizes_stored_text_and_block_payloads(shipped_course):
    migration = importlib.import_module("apps.content.migrations.0003_authored_text_normalized")
    card, other = Card.objects.order_by("pk")[:2]
    block = LessonBlock.objects.filter(kind="terms").order_by("pk")[0]
    messy_payload = {
        **block.payload,
        "items": [
            {**item, "term": f" {item['term']} ", "definition": f"{item['definition']}  \r\n"}
            for item in block.payload["items"]
        ],
    }
    with connection.cursor() as cursor:
        # Written past the model fields, as rows stored before the rule existed were.
        cursor.execute(
            "UPDATE content_card SET term = %s, definition = %s WHERE id = %s",
            [f"  {card.term}\t", f"{card.definition}  \r\n\r\n", card.pk],
        )
        cursor.execute(
            "UPDATE content_lessonblock SET payload = %s WHERE id = %s", [json.dumps(messy_payload), block.pk]
        )
    before = {row["id"]: row for row in Card.objects.values()}

    migration.normalize_authored_text(django_apps, None)

    after = {row["id"]: row for row in Card.objects.values()}
    assert (after[card.pk]["term"], after[card.pk]["definition"]) == (card.term, card.definition)
    assert after[card.pk]["updated_at"] == before[card.pk]["updated_at"]
    assert after[other.pk] == before[other.pk]
    block_after = LessonBlock.objects.get(pk=block.pk)
    assert block_after.payload == block.payload
