"""Reads of course content for learners: only what is not archived, with related rows prefetched."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count, Prefetch, Q, QuerySet
from django.shortcuts import get_object_or_404

from apps.content.models import (
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
)

# A variant on purpose: counted on decks that are visible already, so a card's own flag is all that is left.
_active_cards = Count("cards", filter=Q(cards__archived=False), distinct=True)


def courses_list() -> QuerySet[Course]:
    return Course.objects.filter(archived=False).order_by("title", "id")


def course_get(*, slug: str) -> Course:
    lessons = Lesson.objects.filter(archived=False).order_by("position")
    scenes = ExplorerScene.objects.filter(archived=False).order_by("position")
    return get_object_or_404(
        Course.objects.filter(archived=False).prefetch_related(
            Prefetch("lessons", queryset=lessons), Prefetch("scenes", queryset=scenes)
        ),
        slug=slug,
    )


def _public_questions() -> QuerySet[Question]:
    return Question.objects.filter(archived=False).prefetch_related(
        Prefetch("choices", queryset=Choice.objects.order_by("position"))
    )


def lesson_get(*, slug: str) -> Lesson:
    blocks = LessonBlock.objects.order_by("position").prefetch_related(
        Prefetch("question", queryset=_public_questions())
    )
    return get_object_or_404(
        Lesson.objects.filter(archived=False, course__archived=False)
        .select_related("course")
        .prefetch_related(
            Prefetch(
                "sections",
                queryset=LessonSection.objects.order_by("position").prefetch_related(
                    Prefetch("blocks", queryset=blocks)
                ),
            ),
            Prefetch("decks", queryset=decks_list()),
            Prefetch("questions", queryset=_public_questions().order_by("position")),
            Prefetch("exercises", queryset=exercises_list()),
        ),
        slug=slug,
    )


def decks_visible() -> QuerySet[Deck]:
    """Decks a learner may see: not archived, nor in an archived lesson or course."""
    return Deck.objects.filter(archived=False, lesson__archived=False, lesson__course__archived=False)


def decks_list(*, course_slug: str | None = None, lesson_slug: str | None = None) -> QuerySet[Deck]:
    decks = (
        decks_visible()
        .select_related("lesson__course")
        .annotate(card_count=_active_cards)
        .order_by("lesson__course__title", "lesson__position", "position")
    )
    if course_slug:
        decks = decks.filter(lesson__course__slug=course_slug)
    if lesson_slug:
        decks = decks.filter(lesson__slug=lesson_slug)
    return decks


def deck_get(*, slug: str) -> Deck:
    return get_object_or_404(decks_list(), slug=slug)


def deck_cards_list(*, deck: Deck) -> QuerySet[Card]:
    # A variant on purpose: the deck is one deck_get found visible, so its lesson and course are too.
    return Card.objects.filter(deck=deck, archived=False).order_by("position")


def card_get(*, card_id: int) -> Card:
    return get_object_or_404(
        Card.objects.visible().select_related("deck"),
        pk=card_id,
    )


def question_get(*, slug: str) -> Question:
    return get_object_or_404(
        _public_questions().filter(lesson__archived=False, lesson__course__archived=False).select_related("lesson"),
        slug=slug,
    )


def exercises_list(*, course_slug: str | None = None) -> QuerySet[PipelineExercise]:
    exercises = (
        PipelineExercise.objects.filter(archived=False, lesson__archived=False, lesson__course__archived=False)
        .select_related("lesson")
        .order_by("lesson__course__title", "lesson__position", "position")
    )
    if course_slug:
        exercises = exercises.filter(lesson__course__slug=course_slug)
    return exercises


def exercises_with_concepts(*, course_slug: str | None = None) -> QuerySet[PipelineExercise]:
    """Exercises as a learner opens them: with the concepts they practise and those concepts' cards."""
    practised_cards = Card.objects.visible().select_related("deck").order_by("deck__position", "position")
    practised = (
        Concept.objects.filter(archived=False)
        .order_by("position")
        .prefetch_related(Prefetch("cards", queryset=practised_cards))
    )
    return exercises_list(course_slug=course_slug).prefetch_related(Prefetch("concepts", queryset=practised))


def exercise_get(*, slug: str) -> PipelineExercise:
    return get_object_or_404(exercises_with_concepts(), slug=slug)


def concept_graph_get(*, course_slug: str) -> tuple[Course, list[Concept], list[ConceptLink]]:
    course = get_object_or_404(Course.objects.filter(archived=False), slug=course_slug)
    active_cards = Card.objects.visible().only("id", "deck_id")
    concepts = list(
        Concept.objects.filter(course=course, archived=False)
        .order_by("position")
        .prefetch_related(Prefetch("cards", queryset=active_cards.order_by("deck_id", "position")))
    )
    links = list(
        ConceptLink.objects.filter(source__course=course, source__archived=False, target__archived=False)
        .select_related("source", "target")
        .order_by("position")
    )
    return course, concepts, links


def scenes_list() -> QuerySet[ExplorerScene]:
    return (
        ExplorerScene.objects.filter(archived=False, course__archived=False)
        .select_related("course")
        .order_by("course__title", "position")
    )


def scene_get(*, slug: str) -> ExplorerScene:
    regions = (
        ExplorerRegion.objects.filter(archived=False)
        .order_by("position")
        .prefetch_related(
            Prefetch("cards", queryset=Card.objects.filter(archived=False).order_by("deck_id", "position"))
        )
    )
    return get_object_or_404(scenes_list().prefetch_related(Prefetch("regions", queryset=regions)), slug=slug)


def visible_card_ids_query(*, card_ids: Iterable[int]) -> QuerySet[Card, int]:
    """The ids of these cards a learner may study, as a query (to read it with others in one round trip)."""
    return Card.objects.visible().filter(pk__in=set(card_ids)).values_list("pk", flat=True)


def visible_card_ids(*, card_ids: Iterable[int]) -> set[int]:
    """Which of these cards a learner may study."""
    return set(visible_card_ids_query(card_ids=card_ids))
