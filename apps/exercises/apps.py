"""App configuration for pipeline exercise submissions."""

from django.apps import AppConfig


class ExercisesConfig(AppConfig):
    name = "apps.exercises"
    label = "exercises"
    verbose_name = "Pipeline exercise submissions"

    def ready(self) -> None:
        # Registers the grading tasks and the worker signals that warm up and stop the sandboxes and
        # start and stop each worker's reaper.
        from apps.exercises import reaping, tasks  # noqa: F401
