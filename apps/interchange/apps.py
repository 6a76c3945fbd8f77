"""App configuration for importing and exporting decks."""

from django.apps import AppConfig


class InterchangeConfig(AppConfig):
    name = "apps.interchange"
    label = "interchange"
    verbose_name = "Deck import and export"
