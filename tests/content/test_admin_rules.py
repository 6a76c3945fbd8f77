"""The admin keeps the course-file rules: a write that breaks one is refused whole, and exports load back as edited."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.contrib.admin.models import LogEntry
from django.core.management import call_command
from django.db import models
from django.test import Client
from django.urls import reverse

from apps.content.content_files.check import course_rules_check
from apps.content.content_files.load import content_sources_load
from apps.content.content_files.source import ContentSource
from apps.content.models import (
    Card,
    Concept,
    Course,
    Deck,
    ExplorerRegion,
    ExplorerScene,
    Lesson,
    LessonBlock,
    LessonSection,
    PipelineExercise,
    Question,
    Quiz,
)
from tests.support.admin_forms import form_submission
from tests.support.course_files import content_rows, minimal_course, to_yaml

pytestmark = pytest.mark.django_db

Submission = dict[str, list[str]]


@pytest.fixture
def small_course(db) -> Course:
    """The small test course, plus an archived quiz without questions (allowed while archived)."""
    document = minimal_course()
    document["lessons"][0]["quizzes"].append({"slug": "empty-quiz", "title": "Empty", "archived": True})
    content_sources_load(sources=[ContentSource("small.yaml", to_yaml(document))])
    return Course.objects.get()


def url(model: type[models.Model], view: str, *args: Any) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def change_page(client: Client, obj: models.Model) -> Submission:
    page = client.get(url(type(obj), "change", obj.pk))
    assert page.status_code == 200
    return form_submission(page.content.decode(), f"{obj._meta.model_name}_form")


def post(client: Client, obj: models.Model, data: Submission) -> Any:
    return client.post(url(type(obj), "change", obj.pk), data)


def row_index(data: Submission, prefix: str, pk: int) -> int:
    total = int(data[f"{prefix}-TOTAL_FORMS"][0])
    return next(i for i in range(total) if data.get(f"{prefix}-{i}-id") == [str(pk)])


def add_inline_row(data: Submission, prefix: str, **values: Any) -> int:
    """A new inline row as the admin's "Add another" makes it: the empty form's fields, numbered next."""
    index = int(data[f"{prefix}-TOTAL_FORMS"][0])
    template = f"{prefix}-__prefix__-"
    for name, value in list(data.items()):
        if name.startswith(template):
            data[f"{prefix}-{index}-{name[len(template) :]}"] = list(value)
    for name, value in values.items():
        data[f"{prefix}-{index}-{name}"] = [str(item) for item in value] if isinstance(value, list) else [str(value)]
    data[f"{prefix}-TOTAL_FORMS"] = [str(index + 1)]
    return index


def inline_form(response: Any, prefix: str, index: int) -> Any:
    for inline in response.context["inline_admin_formsets"]:
        if inline.formset.prefix == prefix:
            return inline.formset.forms[index]
    raise AssertionError(f"no inline {prefix!r} on the page")


def assert_refused(response: Any, before: dict[str, Any], logged: int) -> None:
    assert response.status_code == 200, "the page is shown again with the errors"
    assert content_rows() == before
    assert LogEntry.objects.count() == logged


# --- A card needs a concept ----------------------------------------------------------------------


def test_a_card_added_without_a_concept_is_refused_next_to_its_concepts(staff_client, small_course):
    deck = Deck.objects.get()
    data = change_page(staff_client, deck)
    index = add_inline_row(data, "cards", position=deck.cards.count(), slug="shuffle", term="shuffle")
    data[f"cards-{index}-definition"] = ["Randomize the order of elements\r\n"]
    before, logged = content_rows(), LogEntry.objects.count()

    response = post(staff_client, deck, data)

    assert_refused(response, before, logged)
    errors = inline_form(response, "cards", index).errors
    assert any("'basics/shuffle' belongs to no concept" in message for message in errors["concepts"]), errors
    # The bound data is kept, so fixing the row is one more click.
    assert inline_form(response, "cards", index)["term"].value() == "shuffle"


def test_a_card_added_with_a_concept_is_saved_with_it(staff_client, small_course):
    deck = Deck.objects.get()
    concept = Concept.objects.get(slug="transformations")
    data = change_page(staff_client, deck)
    index = add_inline_row(data, "cards", position=deck.cards.count(), slug="shuffle", term="shuffle")
    data[f"cards-{index}-definition"] = ["Randomize the order of elements\r\n"]
    data[f"cards-{index}-concepts"] = [str(concept.pk)]

    response = post(staff_client, deck, data)

    assert response.status_code == 302, response.context and response.context["errors"]
    card = Card.objects.get(slug="shuffle")
    assert card.definition == "Randomize the order of elements"
    assert list(card.concepts.all()) == [concept]
    assert course_rules_check(course=small_course) == []


def test_the_card_page_offers_only_its_courses_concepts(staff_client, small_course):
    card = Card.objects.get(slug="map")
    page = staff_client.get(url(Card, "change", card.pk))
    field = page.context["adminform"].form.fields["concepts"]
    assert set(field.queryset) == set(Concept.objects.filter(course=small_course))
    assert page.context["adminform"].form.initial["concepts"] == [Concept.objects.get(slug="transformations").pk]


def test_removing_a_cards_last_concept_is_refused_on_the_card_page(staff_client, small_course):
    card = Card.objects.get(slug="prefetch")
    data = change_page(staff_client, card)
    data.pop("concepts", None)
    before, logged = content_rows(), LogEntry.objects.count()

    response = post(staff_client, card, data)

    assert_refused(response, before, logged)
    assert "belongs to no concept" in " ".join(response.context["adminform"].form.errors["concepts"])


def test_a_definition_that_names_its_term_is_refused_next_to_the_definition(staff_client, small_course):
    card = Card.objects.get(slug="batch")
    data = change_page(staff_client, card)
    data["definition"] = ["Use batch to stack samples"]
    before, logged = content_rows(), LogEntry.objects.count()

    response = post(staff_client, card, data)

    assert_refused(response, before, logged)
    assert "contains its term" in " ".join(response.context["adminform"].form.errors["definition"])


# --- Blocks are checked as course-file blocks ------------------------------------------------------


def test_a_block_with_an_invalid_payload_is_refused(staff_client, small_course):
    block = LessonBlock.objects.get(kind="prose")
    data = change_page(staff_client, block)
    data["payload"] = [json.dumps({"text": "  \r\n", "colour": "red"})]
    before, logged = content_rows(), LogEntry.objects.count()

    response = post(staff_client, block, data)

    assert_refused(response, before, logged)
    errors = " ".join(response.context["adminform"].form.errors["payload"])
    assert "text: String should have at least 1 character" in errors
    assert "colour: unknown field" in errors


def test_a_block_added_on_its_section_page_stores_the_loaders_payload(staff_client, small_course):
    section = LessonSection.objects.get()
    data = change_page(staff_client, section)
    position = section.blocks.count()
    index = add_inline_row(data, "blocks", position=position, kind="code", heading="  Listing ")
    data[f"blocks-{index}-payload"] = [json.dumps({"code": "\r\n    ds = ds.prefetch(1)  \r\n"})]

    response = post(staff_client, section, data)

    assert response.status_code == 302, response.context and response.context["errors"]
    block = section.blocks.get(position=position)
    assert (block.heading, block.payload) == ("Listing", {"language": "python", "code": "    ds = ds.prefetch(1)"})


def test_a_question_block_without_its_question_is_refused_next_to_the_question(staff_client, small_course):
    section = LessonSection.objects.get()
    data = change_page(staff_client, section)
    index = add_inline_row(data, "blocks", position=section.blocks.count(), kind="question", payload="{}")
    before, logged = content_rows(), LogEntry.objects.count()

    response = post(staff_client, section, data)

    assert_refused(response, before, logged)
    assert inline_form(response, "blocks", index).errors["question"], inline_form(response, "blocks", index).errors


# --- Changelist saves and actions -----------------------------------------------------------------


def test_restoring_a_quiz_without_questions_is_refused_with_a_banner(staff_client, small_course):
    quiz = Quiz.objects.get(slug="empty-quiz")
    before, logged = content_rows(), LogEntry.objects.count()

    response = staff_client.post(
        url(Quiz, "changelist") + "?status=all",
        {"action": "restore_selected", "_selected_action": [quiz.pk], "index": 0},
        follow=True,
    )

    assert content_rows() == before
    assert LogEntry.objects.count() == logged
    shown = [str(message) for message in response.context["messages"]]
    assert any("'empty-quiz'" in text and "needs at least one question" in text for text in shown), shown
    assert not any(text.startswith("Restored") for text in shown), shown


def test_archiving_a_card_by_the_action_passes_the_rules(staff_client, small_course):
    card = Card.objects.get(slug="batch")
    response = staff_client.post(
        url(Card, "changelist"), {"action": "archive_selected", "_selected_action": [card.pk], "index": 0}
    )
    assert response.status_code == 302
    card.refresh_from_db()
    assert card.archived


def test_a_list_editable_restore_that_breaks_a_rule_saves_nothing(staff_client, small_course):
    page = staff_client.get(url(Quiz, "changelist") + "?status=all")
    data = form_submission(page.content.decode(), "changelist-form")
    quiz = Quiz.objects.get(slug="empty-quiz")
    index = next(i for i in range(int(data["form-TOTAL_FORMS"][0])) if data[f"form-{i}-id"] == [str(quiz.pk)])
    data.pop(f"form-{index}-archived", None)
    data["_save"] = ["Save"]
    before, logged = content_rows(), LogEntry.objects.count()

    response = staff_client.post(url(Quiz, "changelist") + "?status=all", data, follow=True)

    assert content_rows() == before
    assert LogEntry.objects.count() == logged
    shown = [str(message) for message in response.context["messages"]]
    assert any("needs at least one question" in text for text in shown), shown


def test_deleting_a_sections_last_block_is_refused(staff_client, small_course):
    section = LessonSection.objects.get()
    blocks = list(section.blocks.order_by("position"))
    data = change_page(staff_client, section)
    for block in blocks:
        data[f"blocks-{row_index(data, 'blocks', block.pk)}-DELETE"] = ["on"]
    before, logged = content_rows(), LogEntry.objects.count()

    response = post(staff_client, section, data)

    assert_refused(response, before, logged)
    assert "at least 1 item" in " ".join(response.context["adminform"].form.non_field_errors())


# --- Every kind of edit, then export and load: nothing to change -------------------------------------


def test_admin_edits_export_and_load_back_without_a_change(staff_client, shipped_course, tmp_path):
    def edit(obj: models.Model, **values: Any) -> Submission:
        data = change_page(staff_client, obj)
        for name, value in values.items():
            data[name] = [value]
        return data

    def save(obj: models.Model, data: Submission) -> None:
        response = post(staff_client, obj, data)
        assert response.status_code == 302, response.context and response.context["errors"]

    card = Card.objects.order_by("pk")[0]
    save(card, edit(card, definition="A first line   \r\nand a second one\r\n\r\n", code="\r\n    indented()\r\n"))

    deck = Deck.objects.order_by("pk")[0]
    data = edit(deck, description="A deck\r\nof cards  \r\n")
    index = add_inline_row(data, "cards", position=deck.cards.count(), slug="added-in-admin", term=" Added term ")
    data[f"cards-{index}-definition"] = ["Made on the deck page\r\nin two lines\r\n"]
    data[f"cards-{index}-concepts"] = [str(Concept.objects.order_by("pk")[0].pk)]
    first_card = deck.cards.order_by("position")[0]
    data[f"cards-{row_index(data, 'cards', first_card.pk)}-term"] = ["  Renamed on the deck page "]
    save(deck, data)

    archived = Card.objects.exclude(pk=card.pk).order_by("-pk")[0]
    response = staff_client.post(
        url(Card, "changelist"), {"action": "archive_selected", "_selected_action": [archived.pk], "index": 0}
    )
    assert response.status_code == 302

    question = Question.objects.filter(kind="single_choice").order_by("pk")[0]
    data = edit(question, explanation="Why, in\r\ntwo lines\r\n")
    choice = question.choices.order_by("position")[0]
    data[f"choices-{row_index(data, 'choices', choice.pk)}-text"] = ["A reworded choice\r\n"]
    save(question, data)

    section = LessonSection.objects.order_by("pk")[0]
    data = change_page(staff_client, section)
    index = add_inline_row(data, "blocks", position=section.blocks.count(), kind="callout", heading="Mind this")
    data[f"blocks-{index}-payload"] = [json.dumps({"tone": "tip", "text": "Added\r\nin the admin  \r\n"})]
    save(section, data)

    concept = Concept.objects.order_by("pk")[0]
    save(concept, edit(concept, definition="Reworded\r\ndefinition\r\n"))

    region = ExplorerRegion.objects.order_by("pk")[0]
    save(region, edit(region, description="A region\r\ndescribed again\r\n"))

    lesson = Lesson.objects.order_by("pk")[0]
    save(lesson, edit(lesson, summary="A summary\r\n\r\nin two paragraphs\r\n"))

    scene = ExplorerScene.objects.order_by("pk")[0]
    save(scene, edit(scene, instructions="  Drag, zoom and click  "))

    exercise = PipelineExercise.objects.order_by("pk")[0]
    save(exercise, edit(exercise, starter_code="\r\ndef build_pipeline(files):\r\n    return files  \r\n"))

    quiz = Quiz.objects.order_by("pk")[0]
    save(quiz, edit(quiz, description="A quiz\r\ndescription\r\n"))

    course = Course.objects.get()
    save(course, edit(course, description="The course\r\nas edited in the admin\r\n"))

    call_command("export_decks", output=tmp_path, stdout=io.StringIO())
    out = io.StringIO()
    call_command("load_decks", str(tmp_path), dry_run=True, verbosity=2, stdout=out)
    assert "no changes" in out.getvalue(), out.getvalue()
    assert Card.objects.get(slug="added-in-admin").term == "Added term"
    assert course_rules_check(course=course) == []


def test_deleting_a_choice_its_question_needs_is_refused(staff_client, small_course):
    question = Question.objects.get(slug="overlap")
    choice = question.choices.get(key="b")
    before, logged = content_rows(), LogEntry.objects.count()

    response = staff_client.post(url(type(choice), "delete", choice.pk), {"post": "yes"}, follow=True)

    assert content_rows() == before
    assert LogEntry.objects.count() == logged
    shown = [str(message) for message in response.context["messages"]]
    assert any("'overlap'" in text and "at least two choices" in text for text in shown), shown
