"""App configuration for spaced repetition."""

from django.apps import AppConfig


class SrsConfig(AppConfig):
    name = "apps.srs"
    label = "srs"
    verbose_name = "Spaced repetition"
