"""Routes of the constellation, explorer visits and activity endpoints."""

from django.urls import URLPattern, path

from apps.explore import api

urlpatterns: list[URLPattern] = [
    path("courses/<slug:slug>/constellation/", api.ConstellationView.as_view(), name="constellation"),
    path(
        "explorer/<slug:slug>/regions/<slug:region_slug>/visits/",
        api.RegionVisitCreateView.as_view(),
        name="region-visit-create",
    ),
    path("explorer/<slug:slug>/", api.SceneDetailView.as_view(), name="scene-detail"),
    path("activity/", api.ActivityView.as_view(), name="activity"),
]
