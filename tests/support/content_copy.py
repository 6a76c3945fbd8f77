"""The shipped course's rows, copied: what `load_decks` wrote once in a test process, written again per test.

Loading the course through the command takes about 0.36 s, and some 450 tests start from it; copying its
rows back takes a few statements. The first test in each process loads it through the real command, and
`tests/content/test_content_copy.py` checks that a copy is row for row what the command writes.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection, models, transaction

from tests.support.paths import DECKS_DIR


def _content_models() -> list[type[models.Model]]:
    return list(apps.get_app_config("content").get_models(include_auto_created=True))


@dataclass(frozen=True, slots=True)
class ContentRows:
    """Every row of every content table, by model, as field values."""

    tables: tuple[tuple[type[models.Model], tuple[dict[str, Any], ...]], ...]

    def write(self) -> None:
        """Writes the rows as they were (the same keys), then moves each table's id sequence past them."""
        written = [model for model, rows in self.tables if rows]
        with transaction.atomic():
            for model, rows in self.tables:
                model._default_manager.bulk_create([model(**row) for row in rows])
            with connection.cursor() as cursor:
                for statement in connection.ops.sequence_reset_sql(no_style(), written):
                    cursor.execute(statement)


def content_is_empty() -> bool:
    return not any(model._default_manager.exists() for model in _content_models())


def content_rows() -> ContentRows:
    """Every content table's rows now, by primary key (foreign keys are checked at commit, so order is free)."""
    return ContentRows(
        tables=tuple(
            (
                model,
                tuple(
                    model._default_manager.order_by("pk").values(
                        *(field.attname for field in model._meta.concrete_fields)
                    )
                ),
            )
            for model in _content_models()
        )
    )


# What the command wrote in this process, once it has run on empty content tables.
_shipped: list[ContentRows] = []


def shipped_course_write() -> None:
    """The course that ships in decks/: copied where the content tables are empty and a copy is kept,
    else loaded through the real command (and kept, where it was loaded on empty tables)."""
    empty = content_is_empty()
    if empty and _shipped:
        _shipped[0].write()
        return
    call_command("load_decks", str(DECKS_DIR), stdout=io.StringIO())
    if empty:
        _shipped.append(content_rows())
