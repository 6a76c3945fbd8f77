"""The shipped course as most tests get it: a copy of what `load_decks` wrote, row for row."""

from __future__ import annotations

import io
from collections.abc import Callable

from django.core.management import call_command
from django.db import transaction

from apps.content.models import Card, Deck
from tests.support.content_copy import ContentRows, content_is_empty, content_rows, shipped_course_write
from tests.support.paths import DECKS_DIR

# Set on save, whatever the row held.
TIMESTAMPS = {"created_at", "updated_at"}


def _without_timestamps(rows: ContentRows) -> list[tuple[str, list[dict[str, object]]]]:
    return [
        (model._meta.label, [{k: v for k, v in row.items() if k not in TIMESTAMPS} for row in table])
        for model, table in rows.tables
    ]


def test_a_copy_of_the_shipped_course_is_row_for_row_what_the_command_writes(db):
    with transaction.atomic():
        call_command("load_decks", str(DECKS_DIR), stdout=io.StringIO())
        loaded = content_rows()
        transaction.set_rollback(True)
    assert content_is_empty()
    assert sum(len(table) for _, table in loaded.tables) > 100

    loaded.write()

    assert _without_timestamps(content_rows()) == _without_timestamps(loaded)
    # The ids to come follow the copied ones.
    copied = max(row["id"] for model, table in loaded.tables if model is Card for row in table)
    deck = Deck.objects.order_by("pk").first()
    assert deck is not None
    card = Card.objects.create(deck=deck, slug="after-the-copy", term="T", definition="D", position=999)
    assert card.pk > copied


def _without_keys(rows: ContentRows) -> list[tuple[str, list[str]]]:
    """Each table's rows without ids, keys or timestamps: what a second load, with new ids, has alike."""
    return [
        (
            model._meta.label,
            sorted(
                repr(
                    sorted(
                        (k, v) for k, v in row.items() if k != "id" and not k.endswith("_id") and k not in TIMESTAMPS
                    )
                )
                for row in table
            ),
        )
        for model, table in rows.tables
    ]


def _written(write: Callable[[], object]) -> ContentRows:
    with transaction.atomic():
        write()
        found = content_rows()
        transaction.set_rollback(True)
    return found


def test_the_shipped_course_as_tests_get_it_is_the_course_the_command_loads(db):
    loaded = _written(lambda: call_command("load_decks", str(DECKS_DIR), stdout=io.StringIO()))
    # The first may load it through the command; the second is a copy.
    for given in (_written(shipped_course_write), _written(shipped_course_write)):
        assert _without_keys(given) == _without_keys(loaded)
    assert content_is_empty()
