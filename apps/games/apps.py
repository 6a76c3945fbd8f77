"""App configuration for games (Match the Pairs)."""

from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "apps.games"
    label = "games"
    verbose_name = "Games"
