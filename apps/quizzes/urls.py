"""Routes of the quizzes endpoints."""

from django.urls import URLPattern, path  # noqa: F401

urlpatterns: list[URLPattern] = []
