"""App configuration for accounts."""

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"

    def ready(self) -> None:
        # Registered with Celery in every process, so beat's schedule never names an unknown task.
        # The schema's description of device tokens registers itself on import.
        from apps.accounts import (
            schema,  # noqa: F401
            tasks,  # noqa: F401
        )
