"""Routes of the submission endpoints."""

from django.urls import path

from apps.exercises import api

urlpatterns = [
    path("exercises/<slug:slug>/submissions/", api.SubmissionCreateView.as_view(), name="submission-create"),
    path("submissions/", api.SubmissionListView.as_view(), name="submission-list"),
    path("submissions/<int:submission_id>/", api.SubmissionDetailView.as_view(), name="submission-detail"),
]
