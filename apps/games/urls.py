"""Routes of the games (Match the Pairs) endpoints."""

from django.urls import URLPattern, path

from apps.games import api

urlpatterns: list[URLPattern] = [
    path("decks/<slug:slug>/match/", api.MatchBoardStartView.as_view(), name="match-start"),
    path("decks/<slug:slug>/match/history/", api.MatchHistoryView.as_view(), name="match-history"),
    path("decks/<slug:slug>/match/leaderboard/", api.MatchLeaderboardView.as_view(), name="match-leaderboard"),
    path("match/<uuid:board_id>/", api.MatchBoardView.as_view(), name="match-board"),
    path("match/<uuid:board_id>/attempts/", api.MatchAttemptView.as_view(), name="match-attempt"),
]
