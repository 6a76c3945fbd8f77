"""Routes of the content endpoints."""

from django.urls import path

from apps.content import api

urlpatterns = [
    path("courses/", api.CourseListView.as_view(), name="course-list"),
    path("courses/<slug:slug>/", api.CourseDetailView.as_view(), name="course-detail"),
    path("courses/<slug:slug>/concept-graph/", api.ConceptGraphView.as_view(), name="concept-graph"),
    path("lessons/<slug:slug>/", api.LessonDetailView.as_view(), name="lesson-detail"),
    path("decks/", api.DeckListView.as_view(), name="deck-list"),
    path("decks/<slug:slug>/", api.DeckDetailView.as_view(), name="deck-detail"),
    path("decks/<slug:slug>/cards/", api.DeckCardListView.as_view(), name="deck-cards"),
    path("cards/<int:card_id>/", api.CardDetailView.as_view(), name="card-detail"),
    path("questions/<slug:slug>/", api.QuestionDetailView.as_view(), name="question-detail"),
    path("exercises/", api.ExerciseListView.as_view(), name="exercise-list"),
    path("exercises/<slug:slug>/", api.ExerciseDetailView.as_view(), name="exercise-detail"),
    path("explorer/", api.SceneListView.as_view(), name="scene-list"),
]
