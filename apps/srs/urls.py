"""Routes of the spaced-repetition endpoints."""

from django.urls import path

from apps.srs import api

urlpatterns = [
    path("decks/<slug:slug>/study/", api.StudyView.as_view(), name="deck-study"),
    path("reviews/", api.ReviewCreateView.as_view(), name="review-create"),
    path("reviews/batch/", api.ReviewBatchView.as_view(), name="review-batch"),
    path("reviews/<int:review_id>/undo/", api.ReviewUndoView.as_view(), name="review-undo"),
]
