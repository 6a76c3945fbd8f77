"""App configuration for pipeline exercise submissions."""

from django.apps import AppConfig


class ExercisesConfig(AppConfig):
    name = "apps.exercises"
    label = "exercises"
    verbose_name = "Pipeline exercise submissions"
