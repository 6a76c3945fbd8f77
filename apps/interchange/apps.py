"""App configuration for importing and exporting decks."""

from django.apps import AppConfig


class InterchangeConfig(AppConfig):
    name = "apps.interchange"
    label = "interchange"
    verbose_name = "Deck import and export"

    def ready(self) -> None:
        from apps.common.jobs import job_kind_register
        from apps.interchange.jobs import ANKI_HISTORY_IMPORTS

        job_kind_register(ANKI_HISTORY_IMPORTS)
