"""Routes of the games (Match the Pairs) endpoints."""

from django.urls import URLPattern, path  # noqa: F401

urlpatterns: list[URLPattern] = []
