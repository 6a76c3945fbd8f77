"""Each rule of decks/SCHEMA.md: a file that breaks it is rejected with file, path, line and reason."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.content.content_files.export import course_doc_build
from apps.content.models import Course, Deck, Lesson
from tests.support.course_files import minimal_course, to_yaml, write_course

pytestmark = pytest.mark.django_db

Mutation = Callable[[dict[str, Any]], object]


def lesson(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["lessons"][0]


def question(doc: dict[str, Any], slug: str) -> dict[str, Any]:
    return next(q for q in lesson(doc)["questions"] if q["slug"] == slug)


def set_in(path: list[Any], value: Any) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        target = doc
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value

    return mutate


def delete_in(path: list[Any]) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        target = doc
        for part in path[:-1]:
            target = target[part]
        del target[path[-1]]

    return mutate


def run_load(path: Path) -> str:
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was loaded"):
        call_command("load_decks", str(path), stdout=io.StringIO(), stderr=err)
    return err.getvalue()


@pytest.fixture
def loaded_course(tmp_path: Path) -> dict[str, Any]:
    """A valid course already in the database, to prove a bad file changes none of it."""
    write_course(tmp_path, minimal_course(), name="good.yaml")
    call_command("load_decks", str(tmp_path / "good.yaml"), stdout=io.StringIO())
    return course_doc_build(course=Course.objects.get()).model_dump()


CASES: list[tuple[str, Mutation, str, str]] = [
    # (rule, change to a valid course, expected YAML path, expected reason)
    (
        "missing field",
        delete_in(["lessons", 0, "decks", 0, "cards", 1, "definition"]),
        "lessons[0].decks[0].cards[1].definition",
        "this field is required",
    ),
    (
        "unknown field",
        set_in(["lessons", 0, "decks", 0, "cards", 0, "defintion"], "typo"),
        "lessons[0].decks[0].cards[0].defintion",
        "unknown field",
    ),
    (
        "wrong type",
        set_in(["lessons", 0, "decks", 0, "cards", 0, "term"], 42),
        "lessons[0].decks[0].cards[0].term",
        "valid string",
    ),
    (
        "bad slug",
        set_in(["lessons", 0, "decks", 0, "slug"], "Basics Deck"),
        "lessons[0].decks[0].slug",
        "must be a slug",
    ),
    (
        "unknown block kind",
        set_in(["lessons", 0, "sections", 0, "blocks", 0, "kind"], "poem"),
        "lessons[0].sections[0].blocks[0]",
        "unknown block kind",
    ),
    (
        "block field",
        delete_in(["lessons", 0, "sections", 0, "blocks", 0, "text"]),
        "lessons[0].sections[0].blocks[0].text",
        "this field is required",
    ),
    (
        "duplicate card slug",
        set_in(["lessons", 0, "decks", 0, "cards", 1, "slug"], "map"),
        "lessons[0].decks[0].cards[1].slug",
        "card slug 'map' is used more than once",
    ),
    (
        "duplicate question slug",
        set_in(["lessons", 0, "questions", 1, "slug"], "overlap"),
        "lessons[0].questions[1].slug",
        "question slug 'overlap' is used more than once",
    ),
    (
        "single choice with two correct",
        lambda d: question(d, "overlap")["choices"][1].update(correct=True),
        "lessons[0].questions[0].choices",
        "exactly one correct choice, not 2",
    ),
    (
        "choice question with one choice",
        lambda d: question(d, "overlap")["choices"].pop(),
        "lessons[0].questions[0].choices",
        "at least two choices",
    ),
    (
        "multiple choice with none correct",
        lambda d: [c.update(correct=False) for c in question(d, "pitfalls")["choices"]],
        "lessons[0].questions[3].choices",
        "needs a correct choice",
    ),
    (
        "duplicate choice key",
        lambda d: question(d, "pitfalls")["choices"][2].update(key="a"),
        "lessons[0].questions[3].choices[2].key",
        "choice key 'a' is used more than once",
    ),
    (
        "choice question with an answer",
        lambda d: question(d, "overlap").update(answer=3),
        "lessons[0].questions[0].answer",
        "a single_choice question has no answer",
    ),
    (
        "short text without answers",
        lambda d: question(d, "format").update(accepted_answers=[]),
        "lessons[0].questions[1].accepted_answers",
        "needs an accepted answer",
    ),
    (
        "short text duplicate answers",
        lambda d: question(d, "format").update(accepted_answers=["TFRecord", "TFRecord"]),
        "lessons[0].questions[1].accepted_answers[1]",
        "accepted answer 'TFRecord' is used more than once",
    ),
    (
        "short text answers the grader reads as one",
        lambda d: question(d, "format").update(accepted_answers=["TFRecord", "Parquet", "TF-record"]),
        "lessons[0].questions[1].accepted_answers[2]",
        "accepted answer 'TF-record' is used more than once (compared without case, spaces or punctuation)",
    ),
    (
        "card definition that names its term",
        set_in(["lessons", 0, "decks", 0, "cards", 2, "definition"], "Prefetching overlaps input and compute"),
        "lessons[0].decks[0].cards[2].definition",
        "the definition contains its term ('prefetch')",
    ),
    (
        "card definition that names its term in code",
        lambda d: d["lessons"][0]["decks"][0]["cards"][0].update(
            term="Dataset.map(fn)", definition="Calls `map` on every element"
        ),
        "lessons[0].decks[0].cards[0].definition",
        "the definition contains its term ('map')",
    ),
    (
        "short text with choices",
        lambda d: question(d, "format").update(choices=[{"key": "a", "text": "x"}]),
        "lessons[0].questions[1].choices",
        "a short_text question has no choices",
    ),
    (
        "numeric without tolerance",
        lambda d: question(d, "batches").pop("tolerance"),
        "lessons[0].questions[2].tolerance",
        "needs a tolerance",
    ),
    (
        "numeric negative tolerance",
        lambda d: question(d, "batches").update(tolerance=-1),
        "lessons[0].questions[2].tolerance",
        "cannot be negative",
    ),
    (
        "question block to unknown question",
        set_in(["lessons", 0, "sections", 0, "blocks", 2, "question"], "nope"),
        "lessons[0].sections[0].blocks[2].question",
        "no question 'nope' in this lesson",
    ),
    (
        "term item to unknown card",
        set_in(["lessons", 0, "sections", 0, "blocks", 1, "items", 0, "card"], "basics/zip"),
        "lessons[0].sections[0].blocks[1].items[0].card",
        "no card 'basics/zip' in this course",
    ),
    (
        "concept to unknown card",
        set_in(["concepts", 0, "cards", 0], "basics/zip"),
        "concepts[0].cards[0]",
        "no card 'basics/zip' in this course",
    ),
    (
        "card in no concept",
        set_in(["concepts", 0, "cards"], ["basics/map"]),
        "lessons[0].decks[0].cards[1]",
        "card 'basics/batch' belongs to no concept",
    ),
    (
        "link to unknown concept",
        set_in(["links", 0, "target"], "nowhere"),
        "links[0].target",
        "no concept 'nowhere' in this course",
    ),
    ("self link", set_in(["links", 0, "target"], "transformations"), "links[0]", "cannot link to itself"),
    ("duplicate link", lambda d: d["links"].append(dict(d["links"][0])), "links[1]", "already given as links[0]"),
    (
        "region to unknown card",
        set_in(["scenes", 0, "regions", 0, "cards", 0], "basics/zip"),
        "scenes[0].regions[0].cards[0]",
        "no card 'basics/zip' in this course",
    ),
    ("wrong version", set_in(["version"], 2), "version", "Input should be 1"),
    (
        "question to unknown card",
        set_in(["lessons", 0, "questions", 0, "cards", 0], "basics/zip"),
        "lessons[0].questions[0].cards[0]",
        "no card 'basics/zip' in this course",
    ),
    (
        "question with a card twice",
        lambda d: question(d, "pitfalls")["cards"].append("basics/map"),
        "lessons[0].questions[3].cards[2]",
        "card 'basics/map' is used more than once",
    ),
    (
        "quiz to unknown question",
        set_in(["lessons", 0, "quizzes", 0, "questions", 2], "nope"),
        "lessons[0].quizzes[0].questions[2]",
        "no question 'nope' in this lesson",
    ),
    (
        "quiz with a question twice",
        set_in(["lessons", 0, "quizzes", 1, "questions", 1], "batches"),
        "lessons[0].quizzes[1].questions[1]",
        "question 'batches' is used more than once",
    ),
    (
        "quiz with another lesson's question",
        lambda d: d["lessons"].append(
            {
                "slug": "second-lesson",
                "title": "Second",
                "quizzes": [{"slug": "q2", "title": "T", "questions": ["format"]}],
            }
        ),
        "lessons[1].quizzes[0].questions[0]",
        "question 'format' belongs to lesson 'first-pipeline'",
    ),
    (
        "duplicate quiz slug",
        set_in(["lessons", 0, "quizzes", 1, "slug"], "first-quiz"),
        "lessons[0].quizzes[1].slug",
        "quiz slug 'first-quiz' is used more than once",
    ),
    (
        "quiz without questions",
        set_in(["lessons", 0, "quizzes", 1, "questions"], []),
        "lessons[0].quizzes[1].questions",
        "a quiz needs at least one question",
    ),
    (
        "html card with a script",
        lambda d: lesson(d)["decks"][0]["cards"][0].update(
            format="html", definition="Runs fn on each element<script>alert(1)</script>"
        ),
        "lessons[0].decks[0].cards[0].definition",
        "holds HTML an HTML card may not",
    ),
    (
        "html card with media from elsewhere",
        lambda d: lesson(d)["decks"][0]["cards"][0].update(
            format="html", example='<img src="https://tracker.example/pixel.png">'
        ),
        "lessons[0].decks[0].cards[0].example",
        "holds HTML an HTML card may not",
    ),
    (
        "card definition over its bound",
        set_in(["lessons", 0, "decks", 0, "cards", 0, "definition"], "x" * 2001),
        "lessons[0].decks[0].cards[0].definition",
        "at most 2000 characters",
    ),
    (
        "card code over its bound",
        set_in(["lessons", 0, "decks", 0, "cards", 1, "code"], "x = 1\n" * 700),
        "lessons[0].decks[0].cards[1].code",
        "at most 4000 characters",
    ),
    (
        "exercise practising an unknown concept",
        set_in(["lessons", 0, "exercises", 0, "concepts"], ["overlap", "nope"]),
        "lessons[0].exercises[0].concepts[1]",
        "no concept 'nope' in this course",
    ),
    (
        "quiz unknown field",
        set_in(["lessons", 0, "quizzes", 0, "question"], ["overlap"]),
        "lessons[0].quizzes[0].question",
        "unknown field",
    ),
]


@pytest.mark.parametrize(("rule", "mutate", "path", "reason"), CASES, ids=[case[0] for case in CASES])
def test_bad_file_is_rejected_with_location_and_changes_nothing(
    tmp_path: Path, loaded_course: dict[str, Any], rule: str, mutate: Mutation, path: str, reason: str
) -> None:
    document = minimal_course()
    mutate(document)
    bad = write_course(tmp_path, document, name="bad.yaml")
    errors = run_load(bad)
    match = re.search(rf"^{re.escape(str(bad))}:(\d+): {re.escape(path)}: .*{re.escape(reason)}", errors, re.M)
    assert match, errors
    # The line named is the line of that path in the file (of its parent, for a missing field).
    line_text = bad.read_text().splitlines()[int(match.group(1)) - 1]
    last_key = re.findall(r"[a-z_]+", path)[-1]
    missing = "required" in reason or "needs a" in reason
    assert last_key in line_text or path.endswith("]") or missing, (line_text, errors)
    assert course_doc_build(course=Course.objects.get()).model_dump() == loaded_course


def test_invalid_yaml_reports_its_line(tmp_path: Path, loaded_course: dict[str, Any]) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("version: 1\nslug: x\ntitle: [unclosed\nlessons: []\n")
    errors = run_load(bad)
    assert re.search(rf"{re.escape(str(bad))}:\d+: \(top level\): not valid YAML", errors), errors


def test_repeated_key_is_an_error(tmp_path: Path, loaded_course: dict[str, Any]) -> None:
    bad = tmp_path / "repeated.yaml"
    bad.write_text(to_yaml(minimal_course()).replace("title: Pipelines 101\n", "title: Pipelines 101\ntitle: Again\n"))
    errors = run_load(bad)
    assert f"{bad}:4: (top level): key 'title' appears twice (first on line 3)" in errors


def test_top_level_must_be_a_mapping(tmp_path: Path, loaded_course: dict[str, Any]) -> None:
    bad = tmp_path / "list.yaml"
    bad.write_text("- just\n- a list\n")
    assert "the top level must be a mapping" in run_load(bad)


def test_one_bad_file_stops_every_file(tmp_path: Path) -> None:
    good = minimal_course()
    good["slug"] = "another-course"
    for item in ("lessons",):
        good[item][0]["slug"] = "another-lesson"
    write_course(tmp_path, {"version": 1, "slug": "solo", "title": "Solo"}, name="a-good.yaml")
    write_course(tmp_path, {"version": 1, "slug": "BAD SLUG", "title": "Bad"}, name="b-bad.yaml")
    errors = run_load(tmp_path)
    assert "b-bad.yaml:2: slug: must be a slug" in errors
    assert Course.objects.count() == 0


def test_slug_owned_by_another_course_is_refused(tmp_path: Path, loaded_course: dict[str, Any]) -> None:
    other = minimal_course()
    other["slug"] = "another-course"
    errors = run_load(write_course(tmp_path, other, name="other.yaml"))
    assert "lessons[0].slug: lesson slug 'first-lesson' already belongs to course 'pipelines-101'" in errors.replace(
        "first-pipeline", "first-lesson"
    )
    assert "lessons[0].decks[0].slug: deck slug 'basics' already belongs to course 'pipelines-101'" in errors
    assert Lesson.objects.count() == 1
    assert Deck.objects.count() == 1


def test_same_slug_in_two_files_is_refused(tmp_path: Path) -> None:
    first = minimal_course()
    second = minimal_course()
    second["slug"] = "another-course"
    second["lessons"][0]["slug"] = "another-lesson"
    second["lessons"][0]["questions"] = []
    second["lessons"][0]["quizzes"] = []
    second["lessons"][0]["sections"] = []
    second["lessons"][0]["exercises"] = []
    second["scenes"] = []
    write_course(tmp_path, first, name="a.yaml")
    write_course(tmp_path, second, name="b.yaml")
    errors = run_load(tmp_path)
    assert "lessons[0].decks[0].slug: deck slug 'basics' is also used in" in errors
    assert Course.objects.count() == 0


def test_same_course_in_two_files_is_refused(tmp_path: Path) -> None:
    write_course(tmp_path, {"version": 1, "slug": "twice", "title": "One"}, name="a.yaml")
    write_course(tmp_path, {"version": 1, "slug": "twice", "title": "Two"}, name="b.yaml")
    assert "course 'twice' is also defined in" in run_load(tmp_path)
