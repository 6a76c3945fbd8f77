"""The migrations in the repository match the models."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_no_model_change_lacks_a_migration():
    out = io.StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out)
    except SystemExit as exit_:
        pytest.fail(f"makemigrations would write new migrations:\n{out.getvalue()} (exit {exit_.code})")
