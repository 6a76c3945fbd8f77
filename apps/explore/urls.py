"""Routes of the constellation, explorer visits and activity endpoints."""

from django.urls import URLPattern, path  # noqa: F401

urlpatterns: list[URLPattern] = []
