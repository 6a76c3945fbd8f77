"""App configuration for accounts."""

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"

    def ready(self) -> None:
        # Registered with Celery in every process, so beat's schedule never names an unknown task.
        from apps.accounts import tasks  # noqa: F401
