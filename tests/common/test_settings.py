"""Settings come from the environment, and an unsafe production configuration refuses to start."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.paths import REPO_ROOT


def start_django(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {key: value for key, value in os.environ.items() if key not in {"SECRET_KEY", "DJANGO_DEBUG"}}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings; "
            "print(settings.DEBUG, settings.DATABASES['default']['ENGINE'], settings.CELERY_BROKER_URL)",
        ],
        cwd=REPO_ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "quizsite.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_production_without_secret_key_refuses_to_start():
    result = start_django()
    assert result.returncode != 0
    assert "SECRET_KEY is not set and DJANGO_DEBUG is off" in result.stderr


def test_production_with_secret_key_starts():
    result = start_django(SECRET_KEY="x" * 50)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("False")


def test_defaults_need_nothing_installed():
    result = start_django(DJANGO_DEBUG="true", DATABASE_URL="", REDIS_URL="", CELERY_BROKER_URL="")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "django.db.backends.sqlite3", "filesystem://"]


def test_urls_select_postgresql_and_redis():
    result = start_django(
        DJANGO_DEBUG="true",
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/quizsite",
        REDIS_URL="redis://127.0.0.1:6379/0",
        CELERY_BROKER_URL="",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "apps.common.postgresql", "redis://127.0.0.1:6379/0"]


def test_a_malformed_boolean_is_reported():
    result = start_django(DJANGO_DEBUG="perhaps")
    assert result.returncode != 0
    assert "DJANGO_DEBUG='perhaps' is not a boolean" in result.stderr
