"""The load report: each item created, updated (with its fields), archived or deleted, in the admin and the command."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from apps.content import admin_views
from apps.content.content_files.load import content_sources_load
from apps.content.content_files.report import LoadReport
from apps.content.content_files.source import ContentSource
from apps.content.management.commands import load_decks
from apps.content.models import Card, Course
from tests.support.course_files import CONTENT_MODELS, minimal_course, to_yaml, write_course

pytestmark = pytest.mark.django_db

IMPORT_URL = reverse("admin:content_course_import_yaml")
FILE_FORMAT_URL = reverse("admin:content_course_file_format")


def load_document(document: dict[str, Any], *, dry_run: bool = False) -> LoadReport:
    return content_sources_load(sources=[ContentSource("course.yaml", to_yaml(document))], dry_run=dry_run)


def edited_course() -> dict[str, Any]:
    """The minimal course with the card `map` renamed, `batch` removed and `shuffle` added in its concept."""
    document = minimal_course()
    deck = document["lessons"][0]["decks"][0]
    deck["cards"][0]["term"] = "Dataset.map"
    deck["cards"] = [card for card in deck["cards"] if card["slug"] != "batch"]
    deck["cards"].append({"slug": "shuffle", "term": "shuffle", "definition": "Mix the order of examples"})
    document["concepts"][0]["cards"] = ["basics/map", "basics/shuffle"]
    return document


def items_of(report: LoadReport) -> list[tuple[str, str, str, list[str]]]:
    return [(item.kind, item.action, item.path, item.fields) for item in report.items]


def row_versions() -> dict[str, list[tuple[Any, ...]]]:
    return {
        model.__name__: list(model._default_manager.order_by("pk").values_list("pk", "updated_at"))
        for model in CONTENT_MODELS
    }


# --- The report of a load ----------------------------------------------------------------------


def test_report_lists_the_edited_new_and_removed_card_with_the_changed_fields():
    load_document(minimal_course())

    report = load_document(edited_course())

    assert items_of(report) == [
        ("card", "updated", "basics/map", ["term"]),
        ("card", "archived", "basics/batch", []),
        ("card", "created", "basics/shuffle", []),
        # The concept's card list names the new card instead of the removed one: a change of its cards.
        ("concept", "updated", "pipelines-101/transformations", ["cards"]),
    ]
    cards = report.counts["cards"]
    # prefetch moved up one place because batch left, but kept its order: renumbered, not listed.
    assert (cards.created, cards.updated, cards.archived, cards.renumbered, cards.unchanged) == (1, 1, 1, 1, 0)
    assert [group.lines for group in report.groups() if group.name == "cards"] == [
        [
            "cards: 1 created, 1 updated, 1 archived, 1 renumbered",
            "  card basics/shuffle created",
            "  card basics/map “Dataset.map” updated: term",
            "  card basics/batch archived",
        ]
    ]


def test_a_card_inserted_first_is_the_one_change_listed():
    load_document(minimal_course())
    document = minimal_course()
    document["lessons"][0]["decks"][0]["cards"].insert(0, {"slug": "cache", "term": "cache", "definition": "Keep"})
    document["concepts"][0]["cards"].append("basics/cache")

    report = load_document(document)

    assert [item for item in items_of(report) if item[0] == "card"] == [("card", "created", "basics/cache", [])]
    assert report.counts["cards"].renumbered == 3


def test_a_card_moved_to_the_top_is_listed_with_its_position_and_the_others_are_not():
    load_document(minimal_course())
    document = minimal_course()
    cards = document["lessons"][0]["decks"][0]["cards"]
    cards.insert(0, cards.pop())

    report = load_document(document)

    assert items_of(report) == [("card", "updated", "basics/prefetch", ["position"])]
    assert report.counts["cards"].renumbered == 2


def test_rewritten_choices_are_reported_on_their_question_and_counted_once():
    load_document(minimal_course())
    document = minimal_course()
    question = document["lessons"][0]["questions"][0]
    question["choices"][1]["text"] = "cache()"
    question["explanation"] = "prefetch overlaps."

    report = load_document(document)

    assert items_of(report) == [("question", "updated", "overlap", ["explanation", "choices"])]
    assert report.counts["questions"].updated == 1
    assert report.counts["questions"].unchanged == 3
    assert (report.counts["choices"].created, report.counts["choices"].deleted) == (2, 2)


def test_a_quiz_whose_questions_change_is_updated_not_unchanged():
    load_document(minimal_course())
    document = minimal_course()
    document["lessons"][0]["quizzes"][1]["questions"].reverse()

    report = load_document(document)

    assert items_of(report) == [("quiz", "updated", "short-quiz", ["questions"])]
    quizzes = report.counts["quizzes"]
    assert (quizzes.updated, quizzes.unchanged) == (1, 1)


def test_a_removed_section_is_reported_deleted():
    document = minimal_course()
    document["lessons"][0]["sections"].append(
        {"slug": "extra", "title": "Extra", "blocks": [{"kind": "prose", "text": "More."}]}
    )
    load_document(document)

    report = load_document(minimal_course())

    assert items_of(report) == [("lesson section", "deleted", "first-pipeline/extra", [])]


def test_a_first_load_lists_every_item_created_with_its_path_and_name():
    report = load_document(minimal_course())
    created = {(item.kind, item.path, item.label) for item in report.items}
    assert ("course", "pipelines-101", "Pipelines 101") in created
    assert ("card", "basics/batch", "batch") in created
    assert ("explorer region", "pipeline-scene/buffer", "Prefetch buffer") in created
    assert ("question", "batches", "How many batches of 32 are in 1,024 examples?") in created
    assert {item.action for item in report.items} == {"created"}
    # The new questions' cards and choices are part of their creation, not changes of their own.
    assert len(report.items) == sum(
        counts.created
        for name, counts in report.counts.items()
        if name
        in {
            "courses",
            "lessons",
            "decks",
            "cards",
            "questions",
            "quizzes",
            "pipeline exercises",
            "lesson sections",
            "concepts",
            "explorer scenes",
            "explorer regions",
        }
    )


def test_dry_run_report_says_would_and_writes_nothing():
    load_document(minimal_course())
    before = row_versions()

    report = load_document(edited_course(), dry_run=True)

    assert row_versions() == before
    assert Card.objects.get(slug="map").term == "map"
    lines = report.item_lines()
    assert "  card basics/map “Dataset.map” would be updated: term" in lines
    assert "  card basics/shuffle would be created" in lines
    assert "  card basics/batch would be archived" in lines
    assert "cards: 1 would be created, 1 would be updated, 1 would be archived, 1 would be renumbered" in lines


def test_a_stored_report_keeps_counts_and_lists_at_most_the_limit():
    document = minimal_course()
    document["lessons"][0]["decks"][0]["cards"] += [
        {"slug": f"extra-{i}", "term": f"extra {i}", "definition": "d"} for i in range(5)
    ]
    document["concepts"][0]["cards"] += [f"basics/extra-{i}" for i in range(5)]
    report = load_document(document)

    stored = LoadReport.from_dict(report.to_dict(limit=2))

    (cards,) = [group for group in stored.groups(limit=2) if group.name == "cards"]
    assert cards.counts.created == 8
    assert [item.path for item in cards.items] == ["basics/map", "basics/batch"]
    assert cards.more == 6
    assert cards.lines[-1] == "  … and 6 more"
    assert stored.courses == ["pipelines-101"]
    assert stored.counts == report.counts


# --- The admin's import page -------------------------------------------------------------------


def test_import_shows_one_report_page_that_a_reload_shows_again_without_importing(staff_client, staff_user):
    load_document(minimal_course())

    response = staff_client.post(IMPORT_URL, {"text": to_yaml(edited_course())})

    assert response.status_code == 302
    report_url = response["Location"]
    page = staff_client.get(report_url)
    html = page.content.decode()
    assert page.status_code == 200
    assert "Imported pipelines-101" in html
    assert "<code>basics/map</code>" in html
    assert "updated: term" in html
    assert "<code>basics/shuffle</code>" in html
    assert "<code>basics/batch</code>" in html
    assert html.count('class="load-report-item action-') == 4
    # One report: no banner per line.
    assert list(page.context["messages"]) == []
    assert LogEntry.objects.filter(user=staff_user).count() == 1

    before = row_versions()
    again = staff_client.get(report_url)
    assert again.status_code == 200
    assert again.content.decode().count('class="load-report-item action-') == 4
    assert row_versions() == before
    assert LogEntry.objects.filter(user=staff_user).count() == 1


def test_validate_only_shows_the_same_report_with_would_and_writes_nothing(staff_client):
    load_document(minimal_course())
    before = row_versions()

    response = staff_client.post(IMPORT_URL, {"text": to_yaml(edited_course()), "dry_run": "on"})

    assert response.status_code == 200
    html = response.content.decode()
    assert "Validation passed: nothing was written" in html
    assert 'id="load-report"' in html
    assert "would be updated: term" in html
    assert "would be created" in html
    assert "would be archived" in html
    assert row_versions() == before


def test_long_lists_are_grouped_collapsible_and_capped(staff_client, monkeypatch):
    monkeypatch.setattr(admin_views, "REPORT_ROWS_PER_KIND", 2)
    document = minimal_course()
    document["lessons"][0]["decks"][0]["cards"] += [
        {"slug": f"extra-{i}", "term": f"extra {i}", "definition": "d"} for i in range(5)
    ]
    document["concepts"][0]["cards"] += [f"basics/extra-{i}" for i in range(5)]

    response = staff_client.post(IMPORT_URL, {"text": to_yaml(document)}, follow=True)

    html = response.content.decode()
    assert '<details class="load-report-group"' in html
    assert "<strong>Cards</strong>: 8 created" in html
    assert "… and 6 more" in html
    assert "<code>basics/extra-4</code>" not in html


def test_report_page_of_another_sign_in_is_not_found(staff_client, staff_user):
    response = staff_client.post(IMPORT_URL, {"text": to_yaml(minimal_course())})
    report_url = response["Location"]
    other = Client()
    other.force_login(get_user_model().objects.create_superuser(username="ann", password="x" * 20))
    missing = other.get(report_url)
    assert missing.status_code == 404
    assert "no longer available" in missing.content.decode()


def test_already_up_to_date_keeps_the_slug_as_written(staff_client):
    document = minimal_course()
    document["slug"] = "tensorflow-ai-phd"
    load_document(document)

    response = staff_client.post(IMPORT_URL, {"text": to_yaml(document)}, follow=True)

    html = response.content.decode()
    assert "Nothing changed: tensorflow-ai-phd is already up to date." in html
    assert "Tensorflow-ai-phd" not in html


def test_submit_button_says_validate_when_validate_only_is_ticked(staff_client):
    page = staff_client.get(IMPORT_URL).content.decode()
    assert 'value="Import" class="default" id="import-yaml-form-submit"' in page
    assert 'data-validate-label="Validate"' in page
    assert "admin/content/import_form.js" in page
    assert finders.find("admin/content/import_form.js")

    # Rendered by the server after a dry run, so it also reads right without the script.
    after_dry_run = staff_client.post(IMPORT_URL, {"text": to_yaml(minimal_course()), "dry_run": "on"})
    assert 'value="Validate" class="default" id="import-yaml-form-submit"' in after_dry_run.content.decode()


# --- The course file format page ---------------------------------------------------------------


def test_import_page_links_to_the_rendered_file_format(staff_client):
    assert f'href="{FILE_FORMAT_URL}"' in staff_client.get(IMPORT_URL).content.decode()
    response = staff_client.get(FILE_FORMAT_URL)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>Course files</h1>" in html
    assert "<h2>Rules the loader checks</h2>" in html


def test_file_format_page_shows_html_in_the_file_as_text(staff_client, settings, tmp_path):
    (tmp_path / "decks").mkdir()
    (tmp_path / "decks" / "SCHEMA.md").write_text("# Format\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1))\n")
    settings.BASE_DIR = tmp_path
    html = staff_client.get(FILE_FORMAT_URL).content.decode()
    assert "<h1>Format</h1>" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'href="javascript:' not in html


def test_file_format_page_is_for_staff_only(client, learner):
    assert client.get(FILE_FORMAT_URL)["Location"].startswith(reverse("admin:login"))
    client.force_login(learner)
    response = client.get(FILE_FORMAT_URL)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


# --- Archive messages --------------------------------------------------------------------------


@pytest.mark.parametrize(("selected", "expected"), [(1, "Archived 1 card."), (2, "Archived 2 cards.")])
def test_archive_message_counts_in_the_singular_or_plural(staff_client, selected, expected):
    load_document(minimal_course())
    chosen = list(Card.objects.order_by("pk").values_list("pk", flat=True)[:selected])
    response = staff_client.post(
        reverse("admin:content_card_changelist"),
        {"action": "archive_selected", "_selected_action": chosen},
        follow=True,
    )
    assert expected in [str(message) for message in response.context["messages"]]


# --- The load_decks command --------------------------------------------------------------------


def run_load_decks(path: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("load_decks", str(path), *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_load_decks_prints_each_changed_item(tmp_path):
    path = write_course(tmp_path, minimal_course())
    run_load_decks(path)
    write_course(tmp_path, edited_course(), name=path.name)

    out = run_load_decks(path)

    assert "cards: 1 created, 1 updated, 1 archived, 1 renumbered\n" in out
    assert "  card basics/map “Dataset.map” updated: term\n" in out
    assert "  card basics/shuffle created\n" in out
    assert "  card basics/batch archived\n" in out
    assert "  concept pipelines-101/transformations “Transformations” updated: cards\n" in out
    assert "unchanged: 1 course, 1 lesson, 1 deck, 4 questions" in out


def test_load_decks_lists_a_few_items_per_kind_unless_asked_for_more(tmp_path, monkeypatch):
    monkeypatch.setattr(load_decks, "LISTED_ITEMS_PER_KIND", 1)
    path = write_course(tmp_path, minimal_course())

    out = run_load_decks(path, "--dry-run")
    assert "  card basics/map would be created\n" in out
    assert "  card basics/batch would be created\n" not in out
    assert "  … and 2 more\n" in out
    assert "(run with -v 2 to list every item)" in out

    everything = run_load_decks(path, "--dry-run", "-v", "2")
    assert "  card basics/prefetch would be created\n" in everything
    assert "more" not in everything

    assert run_load_decks(path, "-v", "0") == ""
    assert Course.objects.filter(slug="pipelines-101").exists()


def test_labels_are_short_and_on_one_line():
    document = minimal_course()
    document["lessons"][0]["decks"][0]["cards"][0]["term"] = "map " + "x" * 150
    document["lessons"][0]["questions"][0]["prompt"] = "Which one\noverlaps?"
    report = load_document(document)
    labels = {item.path: item.label for item in report.items}
    assert labels["basics/map"].startswith("map xxx")
    assert len(labels["basics/map"]) == 80
    assert labels["overlap"] == "Which one overlaps?"


def test_the_anki_import_page_has_the_same_button(staff_client):
    page = staff_client.get(reverse("admin:content_deck_import_anki")).content.decode()
    # "Validate only" starts ticked there, so the button starts as "Validate".
    assert 'value="Validate" class="default" id="deck-import-form-submit"' in page
    assert 'data-import-label="Import"' in page
    assert "admin/content/import_form.js" in page
