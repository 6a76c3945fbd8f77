"""The content admin: every model's pages, archive instead of delete, and the YAML import page."""

from __future__ import annotations

from string import Template

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from apps.content import admin as content_admin
from apps.content.content_files.load import content_sources_load
from apps.content.content_files.source import ContentFilesInvalid, ContentSource
from apps.content.models import (
    Card,
    Concept,
    Course,
    Deck,
    ExplorerRegion,
    ExplorerScene,
    Lesson,
    PipelineExercise,
    Question,
    Quiz,
    QuizQuestion,
)
from tests.support.admin_forms import admin_url, change_form_data
from tests.support.course_files import CONTENT_MODELS

pytestmark = pytest.mark.django_db

ARCHIVABLE_MODELS = [
    Course,
    Lesson,
    Deck,
    Card,
    Question,
    Quiz,
    PipelineExercise,
    Concept,
    ExplorerScene,
    ExplorerRegion,
]

# The minimal valid course file, plus an exercise and a short-text question so that every model has
# a row. ${p} prefixes the slugs that are unique site-wide, so one template makes several courses.
COURSE_TEMPLATE = Template("""\
version: 1
slug: ${p}demo-course
title: Demo
lessons:
  - slug: ${p}l1
    title: Lesson one
    sections:
      - slug: s1
        title: S1
        blocks:
          - {kind: prose, text: hello}
          - {kind: question, question: ${p}q1}
          - kind: terms
            items: [{term: map, definition: Transform, card: ${p}d1/map}]
    decks:
      - slug: ${p}d1
        title: Deck
        cards:
          - {slug: map, term: map, definition: Transform elements}
          - {slug: batch, term: batch, definition: "Group"}
    questions:
      - slug: ${p}q1
        kind: single_choice
        prompt: P?
        explanation: E
        choices: [{key: a, text: A, correct: true}, {key: b, text: B}]
      - slug: ${p}q2
        kind: numeric
        prompt: N?
        explanation: E
        answer: 32
        tolerance: 0
      - slug: ${p}q3
        kind: short_text
        prompt: Which transformation applies a function to every element?
        explanation: E
        accepted_answers: [map]
        cards: [${p}d1/map]
    quizzes:
      - slug: ${p}z1
        title: Quiz
        questions: [${p}q1, ${p}q2, ${p}q3]
    exercises:
      - slug: ${p}e1
        title: Exercise
        prompt: Build the pipeline.
        entry_point: build_pipeline
        starter_code: "def build_pipeline():\\n    pass\\n"
        spec: {rows: 3}
concepts:
  - {slug: c1, name: C1, definition: D, cards: [${p}d1/map, ${p}d1/batch]}
  - {slug: c2, name: C2, definition: D}
links:
  - {source: c1, target: c2, kind: related}
scenes:
  - slug: ${p}sc
    title: Scene
    model_asset: m.glb
    regions: [{slug: r1, title: R, description: D, cards: [${p}d1/map]}]
""")
DEMO_YAML = COURSE_TEMPLATE.substitute(p="")
# Line 5 is the lesson's slug; an upper-case slug breaks the slug rule there.
INVALID_YAML = DEMO_YAML.replace("  - slug: l1\n", "  - slug: Lesson One\n")
INVALID_LINE = 5

IMPORT_URL = reverse("admin:content_course_import_yaml")


def counts() -> dict[str, int]:
    return {model.__name__: model._default_manager.count() for model in CONTENT_MODELS}


def load_course(prefix: str = "") -> None:
    content_sources_load(sources=[ContentSource(f"{prefix}demo.yaml", COURSE_TEMPLATE.substitute(p=prefix))])


@pytest.fixture
def demo_course(db) -> Course:
    load_course()
    return Course.objects.get(slug="demo-course")


# --- Every model's pages -----------------------------------------------------------------------


@pytest.mark.parametrize("model", CONTENT_MODELS, ids=lambda model: model.__name__)
def test_changelist_add_and_change_pages_render_for_staff(staff_client, demo_course, model):
    obj = model.objects.order_by("pk").first()
    assert obj is not None, "the demo course has a row of every model"

    changelist = staff_client.get(admin_url(model, "changelist"))
    assert changelist.status_code == 200
    assert changelist.context["cl"].result_count == model.objects.count()

    assert staff_client.get(admin_url(model, "add")).status_code == 200

    change = staff_client.get(admin_url(model, "change", obj.pk))
    assert change.status_code == 200
    assert change.context["original"] == obj


@pytest.mark.parametrize("model", CONTENT_MODELS, ids=lambda model: model.__name__)
def test_change_page_saves_back_unchanged(staff_client, demo_course, model):
    # Inlines, read-only fields and widgets must round-trip: saving an untouched page changes nothing.
    obj = model.objects.order_by("pk").first()
    url = admin_url(model, "change", obj.pk)
    before = counts()
    response = staff_client.post(url, change_form_data(staff_client.get(url)))
    assert response.status_code == 302, response.context["errors"] if response.context else response
    assert counts() == before


def test_inline_position_given_to_two_rows_keeps_their_order_and_stays_dense(staff_client, demo_course):
    # A position is a row's place in the dragged order, not a value held against the stored rows.
    deck = Deck.objects.get()
    url = admin_url(Deck, "change", deck.pk)
    data = change_form_data(staff_client.get(url))
    data["cards-0-position"] = data["cards-1-position"]
    response = staff_client.post(url, data)
    assert response.status_code == 302
    assert list(Card.objects.order_by("position").values_list("slug", "position")) == [("map", 0), ("batch", 1)]


@pytest.mark.parametrize("model", CONTENT_MODELS, ids=lambda model: model.__name__)
def test_changelist_queries_do_not_grow_with_rows(staff_client, demo_course, model):
    # list_select_related must cover every related object the columns print.
    url = admin_url(model, "changelist")
    with CaptureQueriesContext(connection) as one_course:
        assert staff_client.get(url).status_code == 200
    load_course("x-")
    with CaptureQueriesContext(connection) as two_courses:
        assert staff_client.get(url).status_code == 200
    assert model.objects.count() > 1
    assert len(two_courses) == len(one_course), [query["sql"] for query in two_courses.captured_queries]


def test_changelist_search_finds_a_card_by_its_definition(staff_client, demo_course):
    response = staff_client.get(admin_url(Card, "changelist"), {"q": "Transform elements"})
    assert [card.slug for card in response.context["cl"].result_list] == ["map"]


def test_course_changelist_links_to_the_import_page(staff_client, demo_course):
    response = staff_client.get(admin_url(Course, "changelist"))
    assert f'href="{IMPORT_URL}"' in response.content.decode()


# --- Archive, never delete ---------------------------------------------------------------------


def test_archive_action_archives_the_selected_cards_only(staff_client, demo_course):
    card_map, card_batch = Card.objects.get(slug="map"), Card.objects.get(slug="batch")
    response = staff_client.post(
        admin_url(Card, "changelist"),
        {"action": "archive_selected", "_selected_action": [card_map.pk]},
        follow=True,
    )
    assert response.status_code == 200
    card_map.refresh_from_db()
    card_batch.refresh_from_db()
    assert card_map.archived is True
    assert card_batch.archived is False
    assert "Archived 1 card." in [str(message) for message in response.context["messages"]]


def test_restore_action_restores_archived_cards(staff_client, demo_course):
    Card.objects.update(archived=True)
    staff_client.post(
        # The list shows archived rows, and acts on them, once its status filter asks for them.
        admin_url(Card, "changelist") + "?status=archived",
        {"action": "restore_selected", "_selected_action": list(Card.objects.values_list("pk", flat=True))},
    )
    assert not Card.objects.filter(archived=True).exists()


@pytest.mark.parametrize("model", ARCHIVABLE_MODELS, ids=lambda model: model.__name__)
def test_archivable_models_offer_archive_but_not_delete(staff_client, demo_course, model):
    obj = model.objects.order_by("pk").first()
    response = staff_client.get(admin_url(model, "changelist"))
    actions = dict(response.context["action_form"].fields["action"].choices)
    assert "archive_selected" in actions
    assert "restore_selected" in actions
    assert "delete_selected" not in actions
    assert "archived" in response.context["cl"].list_editable
    assert staff_client.get(admin_url(model, "delete", obj.pk)).status_code == 403
    assert model.objects.filter(pk=obj.pk).exists()


def test_delete_selected_posted_anyway_deletes_no_card(staff_client, demo_course):
    before = Card.objects.count()
    selected = list(Card.objects.values_list("pk", flat=True))
    staff_client.post(
        admin_url(Card, "changelist"), {"action": "delete_selected", "_selected_action": selected, "post": "yes"}
    )
    assert Card.objects.count() == before


def test_structural_rows_can_still_be_deleted(staff_client, demo_course):
    # The quiz keeps two questions, so the course still follows its rules.
    item = QuizQuestion.objects.order_by("-position")[0]
    response = staff_client.post(admin_url(QuizQuestion, "delete", item.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not QuizQuestion.objects.filter(pk=item.pk).exists()


def test_list_editable_archived_toggle_saves(staff_client, demo_course):
    deck = Deck.objects.get()
    response = staff_client.post(
        admin_url(Deck, "changelist"),
        {
            "form-TOTAL_FORMS": "1",
            "form-INITIAL_FORMS": "1",
            "form-0-id": str(deck.pk),
            "form-0-position": str(deck.position),
            "form-0-archived": "on",
            "_save": "Save",
        },
    )
    assert response.status_code == 302
    deck.refresh_from_db()
    assert deck.archived is True


def test_list_positions_are_dragged_not_typed(staff_client, demo_course):
    first, second = Card.objects.order_by("position")
    assert staff_client.get(admin_url(Card, "changelist")).context["cl"].list_editable == ("archived",)
    response = staff_client.post(
        admin_url(Card, "changelist"),
        {
            "form-TOTAL_FORMS": "1",
            "form-INITIAL_FORMS": "1",
            "form-0-id": str(first.pk),
            "form-0-position": str(second.position),
            "_save": "Save",
        },
    )
    assert response.status_code == 302
    assert list(Card.objects.order_by("position").values_list("pk", "position")) == [(first.pk, 0), (second.pk, 1)]


# --- Import YAML -------------------------------------------------------------------------------


def test_import_page_renders_for_staff(staff_client):
    response = staff_client.get(IMPORT_URL)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'enctype="multipart/form-data"' in html
    assert 'name="dry_run"' in html
    assert f'href="{admin_url(Course, "changelist")}"' in html  # breadcrumbs


def test_import_page_sends_learners_to_the_login_page(client, learner):
    client.force_login(learner)
    response = client.post(IMPORT_URL, {"text": DEMO_YAML})
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))
    assert not Course.objects.exists()


def test_import_page_needs_the_course_permissions(client):
    staff_without_permissions = get_user_model().objects.create_user(username="kay", password="x" * 20, is_staff=True)
    client.force_login(staff_without_permissions)
    assert client.get(IMPORT_URL).status_code == 403


def test_importing_pasted_yaml_creates_the_course(staff_client, staff_user):
    response = staff_client.post(IMPORT_URL, {"text": DEMO_YAML}, follow=True)
    ((report_url, status),) = response.redirect_chain
    assert status == 302
    assert report_url.startswith(f"{IMPORT_URL}report/")
    course = Course.objects.get(slug="demo-course")
    assert Card.objects.filter(deck__lesson__course=course).count() == 2
    assert PipelineExercise.objects.get().entry_point == "build_pipeline"
    assert response.context["report"].counts["cards"].created == 2
    assert "Imported demo-course" in response.content.decode()
    assert LogEntry.objects.filter(user=staff_user, object_id=str(course.pk)).exists()


def test_importing_the_same_yaml_again_reports_no_change(staff_client, demo_course):
    before = counts()
    response = staff_client.post(IMPORT_URL, {"text": DEMO_YAML}, follow=True)
    assert "Nothing changed: demo-course is already up to date." in response.content.decode()
    assert counts() == before


def test_importing_invalid_yaml_shows_each_error_and_writes_nothing(staff_client, demo_course):
    with pytest.raises(ContentFilesInvalid) as raised:
        content_sources_load(sources=[ContentSource("pasted text", INVALID_YAML)])
    expected = raised.value.errors
    assert [error.line for error in expected] == [INVALID_LINE]
    before = counts()

    response = staff_client.post(IMPORT_URL, {"text": INVALID_YAML})

    assert response.status_code == 200
    assert counts() == before
    assert Lesson.objects.get().slug == "l1"
    assert list(response.context["load_errors"]) == expected
    html = response.content.decode()
    assert "nothing was written" in html
    for error in expected:
        assert f"<td>{INVALID_LINE}</td>" in html
        assert escape(error.message) in html
        assert escape(error.path) in html
        assert escape(error.file) in html


def test_unparsable_yaml_is_reported_with_its_line(staff_client):
    response = staff_client.post(IMPORT_URL, {"text": "version: 1\nslug: [unclosed\ntitle: x\n"})
    assert response.status_code == 200
    (error,) = response.context["load_errors"]
    assert error.line is not None
    assert "not valid YAML" in error.message
    assert escape(error.message) in response.content.decode()
    assert not Course.objects.exists()


def test_validate_only_writes_nothing_and_shows_the_report(staff_client):
    response = staff_client.post(IMPORT_URL, {"text": DEMO_YAML, "dry_run": "on"})
    assert response.status_code == 200
    assert counts() == dict.fromkeys(counts(), 0)
    report = response.context["report"]
    assert report.courses == ["demo-course"]
    html = response.content.decode()
    assert "Validation passed: nothing was written" in html
    assert "2 would be created" in html


def test_validate_only_still_reports_errors(staff_client):
    response = staff_client.post(IMPORT_URL, {"text": INVALID_YAML, "dry_run": "on"})
    assert response.context["report"] is None
    assert [error.line for error in response.context["load_errors"]] == [INVALID_LINE]
    assert not Course.objects.exists()


def test_uploaded_files_are_imported_together(staff_client):
    files = [
        SimpleUploadedFile("demo.yaml", DEMO_YAML.encode()),
        SimpleUploadedFile("second.yml", COURSE_TEMPLATE.substitute(p="x-").encode()),
    ]
    response = staff_client.post(IMPORT_URL, {"course_files": files})
    assert response.status_code == 302
    assert set(Course.objects.values_list("slug", flat=True)) == {"demo-course", "x-demo-course"}


def test_upload_and_pasted_text_are_validated_together(staff_client):
    upload = SimpleUploadedFile("demo.yaml", DEMO_YAML.encode())
    response = staff_client.post(IMPORT_URL, {"course_files": [upload], "text": INVALID_YAML.replace("l1", "x-l1")})
    assert response.status_code == 200
    assert {error.file for error in response.context["load_errors"]} == {"pasted text"}
    # The valid upload is not written either: a load is all or nothing.
    assert not Course.objects.exists()


def test_upload_with_a_byte_order_mark_is_read(staff_client):
    upload = SimpleUploadedFile("demo.yaml", b"\xef\xbb\xbf" + DEMO_YAML.encode())
    assert staff_client.post(IMPORT_URL, {"course_files": [upload]}).status_code == 302
    assert Course.objects.filter(slug="demo-course").exists()


def test_upload_over_the_size_cap_is_a_form_error(staff_client, monkeypatch):
    monkeypatch.setattr(content_admin, "MAX_UPLOAD_BYTES", 100)
    upload = SimpleUploadedFile("demo.yaml", DEMO_YAML.encode())
    response = staff_client.post(IMPORT_URL, {"course_files": [upload]})
    assert response.status_code == 200
    (message,) = response.context["form"].errors["course_files"]
    assert message.startswith("demo.yaml is ")
    assert "the limit is 100\xa0bytes per file" in message
    assert not Course.objects.exists()


def test_upload_that_is_not_utf8_is_a_form_error(staff_client):
    upload = SimpleUploadedFile("demo.yaml", DEMO_YAML.encode("utf-16"))
    response = staff_client.post(IMPORT_URL, {"course_files": [upload]})
    assert response.status_code == 200
    (message,) = response.context["form"].errors["course_files"]
    assert "demo.yaml is not UTF-8 text" in message
    assert escape(message) in response.content.decode()
    assert not Course.objects.exists()


def test_upload_that_is_not_yaml_is_a_form_error(staff_client):
    upload = SimpleUploadedFile("demo.json", b"{}")
    response = staff_client.post(IMPORT_URL, {"course_files": [upload]})
    assert response.context["form"].errors["course_files"] == ["demo.json: only .yaml or .yml files can be imported."]


def test_import_with_nothing_to_import_is_a_form_error(staff_client):
    response = staff_client.post(IMPORT_URL, {"text": "   \n"})
    assert response.status_code == 200
    assert response.context["form"].non_field_errors() == ["Upload at least one .yaml file or paste YAML text."]


def test_quiz_question_of_another_lesson_is_a_form_error(staff_client, demo_course):
    load_course("x-")
    quiz = Quiz.objects.get(slug="z1")
    foreign = Question.objects.get(slug="x-q1")
    before = counts()
    response = staff_client.post(
        admin_url(QuizQuestion, "add"), {"quiz": quiz.pk, "question": foreign.pk, "position": 9}
    )
    assert response.status_code == 200
    assert "belongs to another lesson" in str(response.context["errors"])
    assert counts() == before
