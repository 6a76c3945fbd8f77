"""App configuration for pipeline exercise submissions."""

from django.apps import AppConfig


class ExercisesConfig(AppConfig):
    name = "apps.exercises"
    label = "exercises"
    verbose_name = "Pipeline exercise submissions"

    def ready(self) -> None:
        # The worker signals that warm up and stop the sandboxes and start and stop each worker's reaper.
        # (Celery finds the tasks module itself.)
        from apps.exercises import worker_signals  # noqa: F401
