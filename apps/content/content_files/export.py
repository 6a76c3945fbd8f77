"""Writing the database back out as course files that load to the identical content."""

from __future__ import annotations

from typing import Any

import yaml
from django.db.models import Prefetch

from apps.content.content_files.schema import CourseDoc
from apps.content.models import (
    Card,
    Concept,
    ConceptLink,
    Course,
    Deck,
    ExplorerRegion,
    ExplorerScene,
    Lesson,
    LessonSection,
    PipelineExercise,
    Question,
    Quiz,
    QuizQuestion,
)


def _card_refs(cards: Any) -> list[str]:
    ordered = sorted(cards, key=lambda card: (card.deck.lesson.position, card.deck.position, card.position))
    return [f"{card.deck.slug}/{card.slug}" for card in ordered]


def course_doc_build(*, course: Course) -> CourseDoc:
    """The course as a file document; archived items are kept, marked `archived: true`."""
    return CourseDoc.model_validate(course_file_data(course=course))


def course_file_data(*, course: Course) -> dict[str, Any]:
    """The course as the plain data of its file, before any validation: what the loader would read back."""
    cards_with_decks = Card.objects.select_related("deck__lesson")
    lessons = (
        Lesson.objects.filter(course=course)
        .order_by("position")
        .prefetch_related(
            Prefetch("sections", queryset=LessonSection.objects.prefetch_related("blocks__question")),
            Prefetch("decks", queryset=Deck.objects.prefetch_related("cards")),
            Prefetch(
                "questions",
                queryset=Question.objects.prefetch_related(
                    "choices", "accepted_answers", Prefetch("cards", queryset=cards_with_decks)
                ),
            ),
            Prefetch(
                "quizzes",
                queryset=Quiz.objects.prefetch_related(
                    Prefetch("items", queryset=QuizQuestion.objects.select_related("question").order_by("position"))
                ),
            ),
            Prefetch(
                "exercises",
                queryset=PipelineExercise.objects.prefetch_related(
                    Prefetch("concepts", queryset=Concept.objects.order_by("position"))
                ),
            ),
        )
    )
    concepts = (
        Concept.objects.filter(course=course)
        .order_by("position")
        .prefetch_related(Prefetch("cards", queryset=cards_with_decks))
    )
    links = ConceptLink.objects.filter(source__course=course).select_related("source", "target").order_by("position")
    scenes = (
        ExplorerScene.objects.filter(course=course)
        .order_by("position")
        .prefetch_related(
            Prefetch(
                "regions",
                queryset=ExplorerRegion.objects.prefetch_related(Prefetch("cards", queryset=cards_with_decks)),
            )
        )
    )
    document: dict[str, Any] = {
        "version": 1,
        "slug": course.slug,
        "title": course.title,
        "subject": course.subject,
        "description": course.description,
        "archived": course.archived,
        "lessons": [_lesson_dict(lesson) for lesson in lessons],
        "concepts": [
            {
                "slug": concept.slug,
                "name": concept.name,
                "definition": concept.definition,
                "cards": _card_refs(concept.cards.all()),
                "archived": concept.archived,
            }
            for concept in concepts
        ],
        "links": [{"source": link.source.slug, "target": link.target.slug, "kind": link.kind} for link in links],
        "scenes": [
            {
                "slug": scene.slug,
                "title": scene.title,
                "instructions": scene.instructions,
                "model_asset": scene.model_asset,
                "archived": scene.archived,
                "regions": [
                    {
                        "slug": region.slug,
                        "title": region.title,
                        "description": region.description,
                        "cards": _card_refs(region.cards.all()),
                        "archived": region.archived,
                    }
                    for region in scene.regions.all()
                ],
            }
            for scene in scenes
        ],
    }
    return document


def _lesson_dict(lesson: Lesson) -> dict[str, Any]:
    return {
        "slug": lesson.slug,
        "title": lesson.title,
        "manual": lesson.manual,
        "subject": lesson.subject,
        "summary": lesson.summary,
        "archived": lesson.archived,
        "sections": [
            {
                "slug": section.slug,
                "title": section.title,
                "blocks": [
                    {
                        "kind": block.kind,
                        "heading": block.heading,
                        **block.payload,
                        **({"question": block.question.slug} if block.question else {}),
                    }
                    for block in section.blocks.all()
                ],
            }
            for section in lesson.sections.all()
        ],
        "decks": [
            {
                "slug": deck.slug,
                "title": deck.title,
                "description": deck.description,
                "archived": deck.archived,
                "cards": [
                    {
                        "slug": card.slug,
                        "term": card.term,
                        "definition": card.definition,
                        "example": card.example,
                        "code": card.code,
                        "format": card.format,
                        "tags": list(card.tags),
                        "anki_guid": card.anki_guid,
                        "archived": card.archived,
                    }
                    for card in deck.cards.all()
                ],
            }
            for deck in lesson.decks.all()
        ],
        "questions": [
            {
                "slug": question.slug,
                "kind": question.kind,
                "prompt": question.prompt,
                "explanation": question.explanation,
                "choices": [
                    {"key": choice.key, "text": choice.text, "correct": choice.is_correct}
                    for choice in question.choices.all()
                ],
                "accepted_answers": [answer.text for answer in question.accepted_answers.all()],
                "answer": question.numeric_answer,
                "tolerance": question.tolerance,
                "cards": _card_refs(question.cards.all()),
                "archived": question.archived,
            }
            for question in lesson.questions.all()
        ],
        "quizzes": [
            {
                "slug": quiz.slug,
                "title": quiz.title,
                "description": quiz.description,
                "archived": quiz.archived,
                "questions": [item.question.slug for item in quiz.items.all()],
            }
            for quiz in lesson.quizzes.all()
        ],
        "exercises": [
            {
                "slug": exercise.slug,
                "title": exercise.title,
                "prompt": exercise.prompt,
                "entry_point": exercise.entry_point,
                "starter_code": exercise.starter_code,
                "spec": exercise.spec,
                "archived": exercise.archived,
                "concepts": [concept.slug for concept in exercise.concepts.all()],
            }
            for exercise in lesson.exercises.all()
        ],
    }


class _CourseFileDumper(yaml.SafeDumper):
    """Multi-line text as literal blocks, so exported prose and code stay readable and diffable."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_CourseFileDumper.add_representer(str, _represent_str)


def course_doc_to_yaml(document: CourseDoc) -> str:
    data = document.model_dump(mode="json", exclude_defaults=True)
    data = {"version": document.version, **data}
    header = f"# Course {document.slug!r}. Format: decks/SCHEMA.md.\n"
    return header + yaml.dump(data, Dumper=_CourseFileDumper, sort_keys=False, allow_unicode=True, width=100)
