"""Routes of the spaced-repetition endpoints."""

from django.urls import path

from apps.srs.adaptation import api as adaptation_api
from apps.srs.progress import api as progress_api
from apps.srs.reviews import api as reviews_api

urlpatterns = [
    path("decks/<slug:slug>/study/", reviews_api.StudyView.as_view(), name="deck-study"),
    path("reviews/", reviews_api.ReviewCreateView.as_view(), name="review-create"),
    path("reviews/batch/", reviews_api.ReviewBatchView.as_view(), name="review-batch"),
    path("reviews/<int:review_id>/undo/", reviews_api.ReviewUndoView.as_view(), name="review-undo"),
    path("srs/settings/", progress_api.SchedulingSettingsView.as_view(), name="srs-settings"),
    path("srs/optimize/", adaptation_api.ParameterFitCreateView.as_view(), name="srs-optimize"),
    path("decks/<slug:slug>/passes/", progress_api.DeckPassCreateView.as_view(), name="deck-pass-create"),
    path("deck-passes/", progress_api.DeckPassListView.as_view(), name="deck-pass-list"),
    path("deck-passes/best/", progress_api.DeckPassBestView.as_view(), name="deck-pass-best"),
    path("leeches/", progress_api.LeechListView.as_view(), name="leech-list"),
    path("leeches/<int:card_id>/unsuspend/", progress_api.LeechUnsuspendView.as_view(), name="leech-unsuspend"),
    path("stats/", progress_api.StatsView.as_view(), name="learner-stats"),
    path("srs/goal/", progress_api.DailyGoalView.as_view(), name="daily-goal"),
    path("courses/<slug:slug>/cards/", progress_api.CourseCardBrowseView.as_view(), name="course-cards"),
    path("cards/<int:card_id>/history/", progress_api.CardHistoryView.as_view(), name="card-history"),
]
