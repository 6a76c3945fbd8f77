"""App configuration for pipeline exercise submissions."""

from django.apps import AppConfig


class ExercisesConfig(AppConfig):
    name = "apps.exercises"
    label = "exercises"
    verbose_name = "Pipeline exercise submissions"

    def ready(self) -> None:
        # Gradings are background jobs; the worker signals warm up and stop the sandboxes.
        # (Celery finds the tasks module itself.)
        from apps.common.jobs import job_kind_register
        from apps.exercises import worker_signals  # noqa: F401
        from apps.exercises.jobs import GRADINGS

        job_kind_register(GRADINGS)
