"""App configuration for the shared plumbing."""

from django.apps import AppConfig


class CommonConfig(AppConfig):
    name = "apps.common"
    label = "common"

    def ready(self) -> None:
        # Every worker's resume round of background jobs. (Celery finds the tasks module itself.)
        from apps.common import worker_signals  # noqa: F401
