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


def test_defaults_need_nothing_installed(tmp_path):
    """Without DATABASE_URL the project starts its own PostgreSQL under var/postgres, and uses it."""
    var_dir = tmp_path / "var"
    defaults = {"DATABASE_URL": "", "REDIS_URL": "", "CELERY_BROKER_URL": "", "QUIZSITE_VAR_DIR": str(var_dir)}
    try:
        result = start_django(DJANGO_DEBUG="true", **defaults)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == ["True", "apps.common.postgresql", "filesystem://"]
        answered = subprocess.run(
            [
                sys.executable,
                "-c",
                "import django; django.setup(); from django.db import connection; "
                "version = connection.cursor().execute('SHOW server_version').fetchone()[0]; "
                "print(connection.settings_dict['HOST'], version)",
            ],
            cwd=REPO_ROOT,
            env={**os.environ, "DJANGO_SETTINGS_MODULE": "quizsite.settings", "DJANGO_DEBUG": "true", **defaults},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert answered.returncode == 0, answered.stderr
        host, version = answered.stdout.split()
        assert host == str(var_dir / "postgres")
        assert int(version.split(".")[0]) >= 18
    finally:
        stopped = subprocess.run(
            [sys.executable, "-m", "quizsite.local_database", "stop"],
            cwd=REPO_ROOT,
            env={**os.environ, "QUIZSITE_VAR_DIR": str(var_dir)},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert stopped.stdout.strip() == "stopped", stopped.stderr


def test_a_database_url_of_another_engine_is_refused():
    result = start_django(DJANGO_DEBUG="true", DATABASE_URL="sqlite:///var/quizsite.sqlite3")
    assert result.returncode != 0
    assert "the project runs on PostgreSQL only" in result.stderr


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
