"""App configuration for constellation, explorer visits and activity."""

from django.apps import AppConfig


class ExploreConfig(AppConfig):
    name = "apps.explore"
    label = "explore"
    verbose_name = "Constellation and explorer"
