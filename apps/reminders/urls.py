"""Routes of the reminder emails' own pages (outside the API: they are opened from an email)."""

from django.urls import path

from apps.reminders.views import unsubscribe_view

urlpatterns = [
    path("email/unsubscribe/<str:token>/", unsubscribe_view, name="reminders-unsubscribe"),
]
