"""App configuration for scheduled review reminder emails."""

from django.apps import AppConfig


class RemindersConfig(AppConfig):
    name = "apps.reminders"
    label = "reminders"
    verbose_name = "Review reminder emails"
