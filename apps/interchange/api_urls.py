"""Routes of the Anki endpoints under /api/v1/: a deck as an Anki package, and importing a learner's Anki history."""

from django.urls import path

from apps.interchange.anki_export_api import DeckAnkiPackageView
from apps.interchange.anki_history_api import AnkiHistoryCreateView, AnkiHistoryDetailView

urlpatterns = [
    path("decks/<slug:slug>/anki-package/", DeckAnkiPackageView.as_view(), name="deck-anki-package"),
    path("anki-history/", AnkiHistoryCreateView.as_view(), name="anki-history-create"),
    path("anki-history/<int:import_id>/", AnkiHistoryDetailView.as_view(), name="anki-history-detail"),
]
