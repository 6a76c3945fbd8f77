"""App configuration for games (Match the Pairs)."""

from django.apps import AppConfig
from django.core import checks


class GamesConfig(AppConfig):
    name = "apps.games"
    label = "games"
    verbose_name = "Games"

    def ready(self) -> None:
        from apps.games.conf import match_settings_check

        checks.register(match_settings_check)
