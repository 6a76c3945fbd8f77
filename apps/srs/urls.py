"""Routes of the spaced-repetition endpoints."""

from django.urls import path

from apps.srs import anki_history_api, api, optimization_api, progress_api

urlpatterns = [
    path("decks/<slug:slug>/study/", api.StudyView.as_view(), name="deck-study"),
    path("reviews/", api.ReviewCreateView.as_view(), name="review-create"),
    path("reviews/batch/", api.ReviewBatchView.as_view(), name="review-batch"),
    path("reviews/<int:review_id>/undo/", api.ReviewUndoView.as_view(), name="review-undo"),
    path("srs/settings/", progress_api.SchedulingSettingsView.as_view(), name="srs-settings"),
    path("srs/optimize/", optimization_api.ParameterFitCreateView.as_view(), name="srs-optimize"),
    path("decks/<slug:slug>/passes/", progress_api.DeckPassCreateView.as_view(), name="deck-pass-create"),
    path("deck-passes/", progress_api.DeckPassListView.as_view(), name="deck-pass-list"),
    path("deck-passes/best/", progress_api.DeckPassBestView.as_view(), name="deck-pass-best"),
    path("leeches/", progress_api.LeechListView.as_view(), name="leech-list"),
    path("leeches/<int:card_id>/unsuspend/", progress_api.LeechUnsuspendView.as_view(), name="leech-unsuspend"),
    path("stats/", progress_api.StatsView.as_view(), name="learner-stats"),
    path("anki-history/", anki_history_api.AnkiHistoryCreateView.as_view(), name="anki-history-create"),
    path("anki-history/<int:import_id>/", anki_history_api.AnkiHistoryDetailView.as_view(), name="anki-history-detail"),
]
