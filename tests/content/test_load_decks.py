"""Loading, reloading and exporting course files through the real management commands."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.content.content_files.export import course_doc_build
from apps.content.content_files.schema import CourseDoc
from apps.content.models import (
    Card,
    Course,
    Deck,
    Lesson,
    LessonBlock,
    Question,
    Quiz,
    QuizQuestion,
)
from tests.support.course_files import CONTENT_MODELS, minimal_course, write_course
from tests.support.paths import DECKS_DIR

pytestmark = pytest.mark.django_db


def load(*paths: Path, dry_run: bool = False) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    args = [str(path) for path in paths] + (["--dry-run"] if dry_run else [])
    call_command("load_decks", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def row_versions() -> dict[str, list[tuple[int, object]]]:
    return {
        model.__name__: list(model._default_manager.order_by("pk").values_list("pk", "updated_at"))
        for model in CONTENT_MODELS
    }


def course_snapshot(slug: str) -> dict:
    return course_doc_build(course=Course.objects.get(slug=slug)).model_dump()


def test_shipped_course_loads_with_the_promised_content():
    load(DECKS_DIR)
    course = Course.objects.get(slug="tensorflow-ai-phd")
    assert course.title == "TensorFlow & AI Programming: PhD Level"
    lesson = Lesson.objects.get(course=course)
    assert lesson.title == "Data Pipelines, tf.data, and Scalable Input Systems"
    assert Card.objects.filter(deck__lesson=lesson, archived=False).count() >= 24
    questions = Question.objects.filter(lesson=lesson)
    assert questions.count() >= 16
    assert set(questions.values_list("kind", flat=True)) == {
        "single_choice",
        "multiple_choice",
        "short_text",
        "numeric",
    }
    uncovered = Card.objects.filter(deck__lesson__course=course, archived=False, concepts__isnull=True)
    assert list(uncovered) == []
    assert course.scenes.get().regions.count() >= 4
    exercise = lesson.exercises.get(slug="tfrecord-image-pipeline")
    assert exercise.entry_point == "build_pipeline"


def test_loading_twice_changes_nothing():
    first_out, _ = load(DECKS_DIR)
    before = row_versions()
    snapshot = course_snapshot("tensorflow-ai-phd")
    second_out, _ = load(DECKS_DIR)
    assert "loaded" in first_out
    assert "no changes" in second_out
    assert row_versions() == before
    assert course_snapshot("tensorflow-ai-phd") == snapshot


def test_editing_a_card_keeps_its_identity(tmp_path):
    document = minimal_course()
    path = write_course(tmp_path, document)
    load(path)
    card = Card.objects.get(slug="map")
    document["lessons"][0]["decks"][0]["cards"][0]["definition"] = "Apply a function to every element"
    write_course(tmp_path, document)
    out, _ = load(path)
    edited = Card.objects.get(slug="map")
    assert edited.pk == card.pk
    assert edited.definition == "Apply a function to every element"
    assert "cards: 1 updated, 2 unchanged\n  card basics/map updated: definition\n" in out


def test_a_card_removed_from_the_file_is_archived_not_deleted(tmp_path):
    document = minimal_course()
    path = write_course(tmp_path, document)
    load(path)
    removed = Card.objects.get(slug="batch")
    cards = document["lessons"][0]["decks"][0]["cards"]
    document["lessons"][0]["decks"][0]["cards"] = [card for card in cards if card["slug"] != "batch"]
    document["concepts"][0]["cards"] = ["basics/map"]
    write_course(tmp_path, document)
    load(path)
    removed.refresh_from_db()
    assert removed.archived is True
    assert list(Card.objects.filter(archived=False).values_list("slug", flat=True)) == ["map", "prefetch"]
    # The archived card goes after the others, so positions stay unique and ordered.
    assert removed.position == 2


def test_reordering_cards_swaps_positions_without_breaking_uniqueness(tmp_path):
    document = minimal_course()
    path = write_course(tmp_path, document)
    load(path)
    ids = dict(Card.objects.values_list("slug", "pk"))
    document["lessons"][0]["decks"][0]["cards"].reverse()
    write_course(tmp_path, document)
    load(path)
    assert list(Card.objects.order_by("position").values_list("slug", flat=True)) == ["prefetch", "batch", "map"]
    assert dict(Card.objects.values_list("slug", "pk")) == ids


def test_a_deck_can_move_to_another_lesson_of_the_course(tmp_path):
    document = minimal_course()
    path = write_course(tmp_path, document)
    load(path)
    deck_id = Deck.objects.get(slug="basics").pk
    second = {"slug": "second-lesson", "title": "Second", "decks": document["lessons"][0].pop("decks")}
    document["lessons"].append(second)
    write_course(tmp_path, document)
    load(path)
    deck = Deck.objects.get(slug="basics")
    assert deck.pk == deck_id
    assert deck.lesson.slug == "second-lesson"
    assert deck.archived is False


def test_dry_run_reports_and_writes_nothing(tmp_path):
    path = write_course(tmp_path, minimal_course())
    out, _ = load(path, dry_run=True)
    assert "would change" in out
    assert Course.objects.count() == 0


def test_export_loads_back_to_identical_content(tmp_path):
    load(DECKS_DIR)
    original = course_snapshot("tensorflow-ai-phd")
    call_command("export_decks", "--output", str(tmp_path), stdout=io.StringIO())
    exported = tmp_path / "tensorflow-ai-phd.yaml"

    # The exported file is the shipped file's content, item for item.
    shipped = CourseDoc.model_validate(yaml.safe_load((DECKS_DIR / "tensorflow-ai-phd.yaml").read_text()))
    assert CourseDoc.model_validate(yaml.safe_load(exported.read_text())) == shipped

    # Loaded into an empty database, the export gives back the same content, and exports the same text.
    _wipe_content()
    load(exported)
    assert course_snapshot("tensorflow-ai-phd") == original
    again = tmp_path / "again"
    call_command("export_decks", "--output", str(again), stdout=io.StringIO())
    assert (again / "tensorflow-ai-phd.yaml").read_text() == exported.read_text()


def _wipe_content() -> None:
    for model in reversed(CONTENT_MODELS):
        model._default_manager.all().delete()


def test_archived_items_survive_the_round_trip(tmp_path):
    document = minimal_course()
    document["lessons"][0]["decks"][0]["cards"][1]["archived"] = True
    path = write_course(tmp_path, document)
    load(path)
    out_dir = tmp_path / "out"
    call_command("export_decks", "--output", str(out_dir), "--course", "pipelines-101", stdout=io.StringIO())
    exported = yaml.safe_load((out_dir / "pipelines-101.yaml").read_text())
    assert exported["lessons"][0]["decks"][0]["cards"][1] == {
        "slug": "batch",
        "term": "batch",
        "definition": "Stack samples into fixed-size groups",
        "archived": True,
    }


def test_large_input_shows_progress(tmp_path):
    document = minimal_course()
    deck = document["lessons"][0]["decks"][0]
    deck["cards"] += [
        {"slug": f"generated-{i}", "term": f"term {i}", "definition": f"definition {i}"} for i in range(1500)
    ]
    document["concepts"][0]["cards"] += [f"basics/generated-{i}" for i in range(1500)]
    path = write_course(tmp_path, document)
    _, err = load(path)
    assert "loading:" in err
    assert err.strip().splitlines()[-1].endswith("(100%)")
    assert Card.objects.count() == 1503


def test_export_refuses_an_unknown_course(tmp_path):
    with pytest.raises(CommandError, match="No such course: nope"):
        call_command("export_decks", "--output", str(tmp_path), "--course", "nope")


def test_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="No such file or folder"):
        load(tmp_path / "absent.yaml")


# --- Quizzes and the cards each question tests ------------------------------------------------


def quiz_slugs(quiz_slug: str) -> list[str]:
    items = QuizQuestion.objects.filter(quiz__slug=quiz_slug).order_by("position")
    return list(items.values_list("question__slug", flat=True))


def test_quizzes_and_question_cards_load_in_order(tmp_path):
    load(write_course(tmp_path, minimal_course()))
    assert list(Quiz.objects.order_by("position").values_list("slug", flat=True)) == ["first-quiz", "short-quiz"]
    assert quiz_slugs("first-quiz") == ["overlap", "format", "batches", "pitfalls"]
    assert quiz_slugs("short-quiz") == ["batches", "overlap"]
    assert Quiz.objects.get(slug="first-quiz").description == "Every kind of question."
    pitfalls = Question.objects.get(slug="pitfalls")
    assert sorted(pitfalls.cards.values_list("slug", flat=True)) == ["map", "prefetch"]
    assert list(Question.objects.get(slug="format").cards.all()) == []


def test_reordering_a_quiz_keeps_the_quiz_and_removing_it_archives_it(tmp_path):
    document = minimal_course()
    path = write_course(tmp_path, document)
    load(path)
    quiz_id = Quiz.objects.get(slug="first-quiz").pk
    lesson_doc = document["lessons"][0]
    lesson_doc["quizzes"][0]["questions"].reverse()
    lesson_doc["quizzes"].pop()
    lesson_doc["questions"][0]["cards"] = ["basics/map"]
    write_course(tmp_path, document)
    out, _ = load(path)
    assert Quiz.objects.get(slug="first-quiz").pk == quiz_id
    assert quiz_slugs("first-quiz") == ["pitfalls", "batches", "format", "overlap"]
    removed = Quiz.objects.get(slug="short-quiz")
    assert removed.archived is True
    assert quiz_slugs("short-quiz") == ["batches", "overlap"]
    assert list(Question.objects.get(slug="overlap").cards.values_list("slug", flat=True)) == ["map"]
    assert "quizzes: 1 updated, 1 archived\n" in out
    assert "  quiz first-quiz “First quiz” updated: questions\n" in out
    assert "  quiz short-quiz “Short quiz” archived\n" in out


def test_quizzes_and_question_cards_survive_the_round_trip(tmp_path):
    document = minimal_course()
    document["lessons"][0]["quizzes"][1]["archived"] = True
    load(write_course(tmp_path, document))
    out_dir = tmp_path / "out"
    call_command("export_decks", "--output", str(out_dir), "--course", "pipelines-101", stdout=io.StringIO())
    exported = yaml.safe_load((out_dir / "pipelines-101.yaml").read_text())
    assert exported["lessons"][0]["quizzes"] == document["lessons"][0]["quizzes"]
    assert [q.get("cards") for q in exported["lessons"][0]["questions"]] == [
        ["basics/prefetch"],
        None,
        None,
        ["basics/map", "basics/prefetch"],
    ]
    snapshot = course_snapshot("pipelines-101")
    _wipe_content()
    load(out_dir / "pipelines-101.yaml")
    assert course_snapshot("pipelines-101") == snapshot


def test_shipped_quizzes_mix_every_kind_and_every_question_tests_a_card():
    load(DECKS_DIR)
    questions = Question.objects.filter(lesson__slug="data-pipelines-tf-data", archived=False)
    assert questions.count() == 21
    assert not questions.filter(cards__isnull=True).exists()
    review = Quiz.objects.get(slug="tf-data-pipelines-review")
    assert set(quiz_slugs(review.slug)) == set(questions.values_list("slug", flat=True))
    # The page check is the course page's own questions: the first four question blocks of the manual.
    page_check = quiz_slugs("tf-data-page-check")
    blocks = LessonBlock.objects.filter(kind="question").order_by("section__position", "position")
    assert page_check == [block.question.slug for block in blocks if block.question is not None][:4]
    kinds = set(
        QuizQuestion.objects.filter(quiz__lesson__slug="data-pipelines-tf-data").values_list(
            "question__kind", flat=True
        )
    )
    assert kinds == {"single_choice", "multiple_choice", "short_text", "numeric"}
    checkpoints = QuizQuestion.objects.filter(quiz__slug="tf-data-section-checkpoints")
    assert set(checkpoints.values_list("question__kind", flat=True)) == kinds
