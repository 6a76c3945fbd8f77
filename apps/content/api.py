"""Read endpoints for course content."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.common.fields import CleanSlugField
from apps.common.pagination import PageQuery
from apps.common.query import query_params_validate
from apps.content import selectors
from apps.content.outputs import course_summary_data
from apps.content.serializers import (
    CardOutput,
    ConceptGraphOutput,
    CourseOutput,
    CourseSummaryOutput,
    DeckCardOutput,
    DeckOutput,
    ExerciseOutput,
    LessonOutput,
    PublicQuestionOutput,
    SceneListOutput,
)

_course_filter = OpenApiParameter("course", str, description="Only this course's items (its slug).")


class CourseListView(generics.ListAPIView):
    serializer_class = CourseSummaryOutput

    def get_queryset(self) -> QuerySet[Any]:
        return selectors.courses_list()

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # CourseSummaryOutput's own mapping, without building a serializer per request.
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response([course_summary_data(course) for course in page or []])


class CourseDetailView(generics.RetrieveAPIView):
    serializer_class = CourseOutput

    def get_object(self) -> Any:
        return selectors.course_get(slug=self.kwargs["slug"])


class LessonDetailView(generics.RetrieveAPIView):
    """A lesson's manual: its sections of typed blocks, with its decks, questions and exercises."""

    serializer_class = LessonOutput

    def get_object(self) -> Any:
        return selectors.lesson_get(slug=self.kwargs["slug"])


@extend_schema(parameters=[_course_filter, OpenApiParameter("lesson", str, description="Only this lesson's decks.")])
class DeckListView(generics.ListAPIView):
    serializer_class = DeckOutput

    class Query(PageQuery):
        course = CleanSlugField(required=False)
        lesson = CleanSlugField(required=False)

    def get_queryset(self) -> QuerySet[Any]:
        params = query_params_validate(query_params=self.request.query_params, serializer_class=self.Query)
        return selectors.decks_list(course_slug=params.get("course"), lesson_slug=params.get("lesson"))


class DeckDetailView(generics.RetrieveAPIView):
    serializer_class = DeckOutput

    def get_object(self) -> Any:
        return selectors.deck_get(slug=self.kwargs["slug"])


class DeckCardListView(generics.ListAPIView):
    serializer_class = DeckCardOutput

    def get_queryset(self) -> QuerySet[Any]:
        return selectors.deck_cards_list(deck=selectors.deck_get(slug=self.kwargs["slug"]))


class CardDetailView(generics.RetrieveAPIView):
    serializer_class = CardOutput

    def get_object(self) -> Any:
        return selectors.card_get(card_id=self.kwargs["card_id"])


class QuestionDetailView(generics.RetrieveAPIView):
    serializer_class = PublicQuestionOutput

    def get_object(self) -> Any:
        return selectors.question_get(slug=self.kwargs["slug"])


@extend_schema(parameters=[_course_filter])
class ExerciseListView(generics.ListAPIView):
    serializer_class = ExerciseOutput

    class Query(PageQuery):
        course = CleanSlugField(required=False)

    def get_queryset(self) -> QuerySet[Any]:
        params = query_params_validate(query_params=self.request.query_params, serializer_class=self.Query)
        return selectors.exercises_with_concepts(course_slug=params.get("course"))


class ExerciseDetailView(generics.RetrieveAPIView):
    serializer_class = ExerciseOutput

    def get_object(self) -> Any:
        return selectors.exercise_get(slug=self.kwargs["slug"])


class ConceptGraphView(APIView):
    @extend_schema(
        summary="A course's concept graph: concepts with their cards, and typed links", responses=ConceptGraphOutput
    )
    def get(self, request: Request, slug: str) -> Response:
        course, concepts, links = selectors.concept_graph_get(course_slug=slug)
        return Response(ConceptGraphOutput({"course": course.slug, "concepts": concepts, "links": links}).data)


class SceneListView(generics.ListAPIView):
    serializer_class = SceneListOutput

    def get_queryset(self) -> QuerySet[Any]:
        return selectors.scenes_list()
