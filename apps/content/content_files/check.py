"""The loader's own rules, run on a course as the database holds it, for writes made outside course files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import models
from django.db.models import QuerySet

from apps.content.content_files.export import course_file_data
from apps.content.content_files.load import cross_file_errors
from apps.content.content_files.source import ContentError, Location, ParsedFile
from apps.content.content_files.validate import course_doc_errors, course_doc_from_file
from apps.content.models import (
    AcceptedAnswer,
    Card,
    Choice,
    Concept,
    ConceptLink,
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
    QuizQuestion,
)

# How each content row reaches its course, for finding the courses a write touched.
COURSE_PATHS: dict[type[models.Model], str] = {
    Course: "pk",
    Lesson: "course_id",
    LessonSection: "lesson__course_id",
    LessonBlock: "section__lesson__course_id",
    Deck: "lesson__course_id",
    Card: "deck__lesson__course_id",
    Question: "lesson__course_id",
    Choice: "question__lesson__course_id",
    AcceptedAnswer: "question__lesson__course_id",
    Quiz: "lesson__course_id",
    QuizQuestion: "quiz__lesson__course_id",
    PipelineExercise: "lesson__course_id",
    Concept: "course_id",
    ConceptLink: "source__course_id",
    ExplorerScene: "course_id",
    ExplorerRegion: "scene__course_id",
}

# File keys whose model field has another name.
_FIELD_NAMES: dict[type[models.Model], dict[str, str]] = {
    Choice: {"correct": "is_correct"},
    Question: {"answer": "numeric_answer"},
}
_BLOCK_OWN_FIELDS = frozenset({"kind", "heading", "question"})


@dataclass(frozen=True)
class CourseRuleError:
    """A broken rule, with the row and field it concerns where the file's location names one."""

    error: ContentError
    item: str
    model: type[models.Model] | None = None
    pk: Any = None
    field: str | None = None

    @property
    def message(self) -> str:
        return self.error.message if self.item_named_in_message else f"{self.item}: {self.error.message}"

    @property
    def item_named_in_message(self) -> bool:
        return self.item.split(" ", 1)[-1] in self.error.message


@dataclass
class _CourseInDatabase(ParsedFile):
    """The course's data read as a file, remembering where each error points."""

    locations: dict[ContentError, Location] = field(default_factory=dict)

    def error(self, location: Location, message: str) -> ContentError:
        content_error = super().error(location, message)
        self.locations[content_error] = location
        return content_error


def course_ids_of(*, rows: QuerySet[Any]) -> set[int]:
    """The courses that these rows of a content model belong to."""
    path = COURSE_PATHS.get(rows.model)
    if path is None:
        return set()
    return set(rows.order_by().values_list(path, flat=True).distinct())


def course_rules_check(*, course: Course) -> list[CourseRuleError]:
    """Every rule the loader applies to a course file, applied to the course as stored; [] when it would load."""
    data = course_file_data(course=course)
    parsed = _CourseInDatabase(name=f"course {course.slug!r}", data=data)
    document, errors = course_doc_from_file(parsed)
    if document is not None:
        errors = course_doc_errors(parsed, document)
        if not errors:
            errors = cross_file_errors([(parsed, document)])
    return [_placed(course, data, error, parsed.locations.get(error, ())) for error in sorted(errors)]


# --- Where an error points ---------------------------------------------------------------------

# A file item: its model, the lookup that finds its row, and how it is named, from the parent's and its own data.
_Item = tuple[type[models.Model], dict[str, Any], str, str]
_ItemOf = Callable[[dict[str, Any], dict[str, Any], int], _Item]


def _slugged(model: type[models.Model], kind: str) -> _ItemOf:
    def item(parent: dict[str, Any], data: dict[str, Any], index: int) -> _Item:
        return model, {"slug": data["slug"]}, kind, data["slug"]

    return item


def _section(parent: dict[str, Any], data: dict[str, Any], index: int) -> _Item:
    ref = f"{parent['slug']}/{data['slug']}"
    return LessonSection, {"lesson__slug": parent["slug"], "slug": data["slug"]}, "section", ref


def _card(parent: dict[str, Any], data: dict[str, Any], index: int) -> _Item:
    return Card, {"deck__slug": parent["slug"], "slug": data["slug"]}, "card", f"{parent['slug']}/{data['slug']}"


def _choice(parent: dict[str, Any], data: dict[str, Any], index: int) -> _Item:
    ref = f"{parent['slug']}/{data['key']}"
    return Choice, {"question__slug": parent["slug"], "key": data["key"]}, "choice", ref


def _accepted_answer(parent: dict[str, Any], data: Any, index: int) -> _Item:
    lookup = {"question__slug": parent["slug"], "text": data}
    return AcceptedAnswer, lookup, "accepted answer", f"{parent['slug']}/{data}"


def _quiz_item(parent: dict[str, Any], data: Any, index: int) -> _Item:
    lookup = {"quiz__slug": parent["slug"], "question__slug": data}
    return QuizQuestion, lookup, "quiz question", f"{parent['slug']}/{data}"


def _region(parent: dict[str, Any], data: dict[str, Any], index: int) -> _Item:
    ref = f"{parent['slug']}/{data['slug']}"
    return ExplorerRegion, {"scene__slug": parent["slug"], "slug": data["slug"]}, "region", ref


# The nesting of a course file: list key -> (how its items are found, the lists inside each item).
_TREE: dict[str, tuple[_ItemOf | None, dict[str, Any]]] = {
    "lessons": (
        _slugged(Lesson, "lesson"),
        {
            "sections": (_section, {"blocks": (None, {})}),
            "decks": (_slugged(Deck, "deck"), {"cards": (_card, {})}),
            "questions": (
                _slugged(Question, "question"),
                {"choices": (_choice, {}), "accepted_answers": (_accepted_answer, {})},
            ),
            "quizzes": (_slugged(Quiz, "quiz"), {"questions": (_quiz_item, {})}),
            "exercises": (_slugged(PipelineExercise, "exercise"), {}),
        },
    ),
    "concepts": (None, {}),
    "links": (None, {}),
    "scenes": (_slugged(ExplorerScene, "scene"), {"regions": (_region, {})}),
}


def _course_item(course: Course, key: str, parents: list[Any], data: Any, index: int) -> _Item | None:
    """The items whose lookup needs more than their parent: blocks by place, concepts and links by course."""
    if key == "blocks":
        lesson, section = parents[-2], parents[-1]
        lookup = {"section__lesson__slug": lesson["slug"], "section__slug": section["slug"], "index": index}
        return LessonBlock, lookup, "block", f"{lesson['slug']}/{section['slug']}#{index + 1}"
    if key == "concepts":
        return Concept, {"course": course, "slug": data["slug"]}, "concept", data["slug"]
    if key == "links":
        lookup = {"source__course": course, "source__slug": data["source"], "target__slug": data["target"]}
        return (
            ConceptLink,
            {**lookup, "kind": data["kind"]},
            "link",
            f"{data['source']} {data['kind']} {data['target']}",
        )
    return None


def _placed(course: Course, data: dict[str, Any], error: ContentError, location: Location) -> CourseRuleError:
    found: tuple[int, _Item] = (0, (Course, {"pk": course.pk}, "course", course.slug))
    tree: dict[str, Any] = _TREE
    parents: list[Any] = [data]
    current: Any = data
    depth = 0
    while depth + 1 < len(location) and isinstance(current, dict):
        key, index = location[depth], location[depth + 1]
        items = current.get(key) if isinstance(key, str) else None
        if key not in tree or not isinstance(index, int) or not isinstance(items, list) or index >= len(items):
            break
        item_of, children = tree[key]
        item = items[index]
        try:
            described = item_of(current, item, index) if item_of else _course_item(course, key, parents, item, index)
        except (KeyError, TypeError):
            break
        if described is None:
            break
        found = (depth + 2, described)
        parents.append(item)
        tree, current, depth = children, item, depth + 2
    consumed, (model, lookup, kind, ref) = found
    rest = location[consumed:]
    return CourseRuleError(
        error=error,
        item=f"{kind} {ref!r}",
        model=model,
        pk=_row_pk(model, lookup),
        field=_field_name(model, rest),
    )


def _row_pk(model: type[models.Model], lookup: dict[str, Any]) -> Any:
    rows = model._default_manager.filter(**{name: value for name, value in lookup.items() if name != "index"})
    if "index" in lookup:
        rows = rows.order_by("position")[lookup["index"] :]
    return next(iter(rows.values_list("pk", flat=True)[:1]), None)


def _field_name(model: type[models.Model], rest: Location) -> str | None:
    if not rest:
        # The one rule about a whole card is that a concept teaches it, and a card's concepts are set on the card.
        # A quiz's question is named by its item itself.
        whole_item_fields: dict[type[models.Model], str] = {Card: "concepts", QuizQuestion: "question"}
        return whole_item_fields.get(model)
    name = rest[0]
    if not isinstance(name, str):
        return None
    if model is LessonBlock and name not in _BLOCK_OWN_FIELDS:
        return "payload"
    return _FIELD_NAMES.get(model, {}).get(name, name)
