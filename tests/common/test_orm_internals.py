"""apps.common.orm_internals, held to what Django's public API gives for the same work.

Every function there reaches below the ORM's public API; each test here compares it with the public way
(iterating the queryset, bulk_create, values_list, connection.cursor()), so a Django release that changes
one of the parts it leans on fails here, naming the function."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Count
from django.test.utils import CaptureQueriesContext

from apps.accounts.devices import device_token_issue
from apps.accounts.models import DeviceToken
from apps.common.orm_internals import (
    insert_statement,
    preparing_cursor,
    query_compile,
    rows_converted,
    rows_stored,
)
from apps.srs.models import CardMemory, SchedulerProfile
from apps.srs.settings.services import scheduling_settings_update
from tests.support.paths import REPO_ROOT

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def _run(sql: str, params) -> list:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _fields(instance, model) -> list:
    return [getattr(instance, field.attname) for field in model._meta.concrete_fields]


def test_a_compiled_queryset_builds_the_instances_and_joined_rows_the_queryset_gives():
    user = get_user_model().objects.create_user(username="ada", password="a-long-password-1")
    scheduling_settings_update(learner=user, changes={"desired_retention": 0.85})
    device_token_issue(user=user, device_name="phone")
    queryset = DeviceToken.objects.select_related("user", "user__scheduling_settings").filter(user=user)
    compiled = query_compile(queryset, using="default")
    assert compiled is not None
    (found,) = compiled.results(_run(compiled.sql, compiled.params))
    (expected,) = list(queryset)
    assert _fields(found, DeviceToken) == _fields(expected, DeviceToken)
    with CaptureQueriesContext(connection) as captured:
        assert _fields(found.user, get_user_model()) == _fields(expected.user, get_user_model())
        settings = found.user.scheduling_settings
        assert _fields(settings, type(settings)) == _fields(expected.user.scheduling_settings, type(settings))
    assert captured.captured_queries == []  # the joined rows came attached
    assert found._state.adding is False and found._state.db == "default"


def test_a_compiled_values_list_gives_the_values_list_rows(learner, deck_cards):
    _memories(learner, deck_cards[:3])
    queryset = CardMemory.objects.filter(learner=learner).order_by("card_id").values_list("card_id", "due", "stage")
    compiled = query_compile(queryset, using="default")
    assert compiled is not None
    assert compiled.results(_run(compiled.sql, compiled.params)) == list(queryset)
    assert all(due.tzinfo is not None for _, due, _ in compiled.results(_run(compiled.sql, compiled.params)))


def test_a_queryset_that_can_match_nothing_compiles_to_none_and_other_shapes_are_refused():
    assert query_compile(DeviceToken.objects.filter(pk__in=[]), using="default") is None
    with pytest.raises(ValueError, match="whole model instances or values_list rows"):
        query_compile(DeviceToken.objects.annotate(n=Count("user")), using="default")
    with pytest.raises(ValueError, match="whole model instances or values_list rows"):
        query_compile(DeviceToken.objects.values("pk"), using="default")
    with pytest.raises(ValueError, match="whole model instances or values_list rows"):
        query_compile(DeviceToken.objects.only("pk"), using="default")


def _memory(learner, card, *, stability: float) -> CardMemory:
    return CardMemory(
        learner=learner,
        card=card,
        stage=2,
        stability=stability,
        difficulty=5.0,
        due=NOW + timedelta(days=3),
        last_review=NOW,
        first_review=NOW,
        reps=1,
        updated_at=NOW,
    )


def _memories(learner, cards) -> list[CardMemory]:
    return CardMemory.objects.bulk_create([_memory(learner, card, stability=3.0) for card in cards])


def test_an_insert_statement_writes_what_bulk_create_writes_and_returns_the_ids(learner, deck_cards):
    mine = [_memory(learner, card, stability=2.0 + index) for index, card in enumerate(deck_cards[:3])]
    sql, params = insert_statement(CardMemory, mine, connection=connection, returning=True)
    ids = [pk for (pk,) in _run(sql, params)]
    assert len(ids) == 3
    other = get_user_model().objects.create_user(username="twin", password="a-long-password-1")
    twins = CardMemory.objects.bulk_create(
        [_memory(other, card, stability=2.0 + index) for index, card in enumerate(deck_cards[:3])]
    )
    skip = {"id", "learner_id", "updated_at"}

    def stored(pks: list[int]) -> list[list]:
        return [
            [getattr(row, field.attname) for field in CardMemory._meta.concrete_fields if field.attname not in skip]
            for row in CardMemory.objects.filter(pk__in=pks).order_by("card_id")
        ]

    assert stored(ids) == stored([twin.pk for twin in twins])
    assert set(CardMemory.objects.filter(pk__in=ids).values_list("learner_id", flat=True)) == {learner.pk}


def test_an_upsert_statement_overwrites_the_named_fields_of_the_row_already_there(learner, deck_cards):
    (kept,) = _memories(learner, deck_cards[:1])
    changed = _memory(learner, deck_cards[0], stability=9.5)
    changed.lapses = 2
    fresh = _memory(learner, deck_cards[1], stability=4.0)
    sql, params = insert_statement(
        CardMemory, [changed, fresh], connection=connection, upsert=(("learner", "card"), ("stability",))
    )
    _run(sql + " RETURNING 1", params)
    kept.refresh_from_db()
    assert (kept.stability, kept.lapses) == (9.5, 0)  # only the named field is overwritten
    assert CardMemory.objects.get(learner=learner, card=deck_cards[1]).stability == 4.0
    rows_stored([changed, fresh], using="default")
    assert (changed._state.adding, changed._state.db) == (False, "default")


def test_rows_read_by_hand_are_converted_as_values_list_converts_them():
    SchedulerProfile.objects.create(digest="d" * 64, config={"weights": [0.5, 1.5], "retention": 0.9})
    fields = [SchedulerProfile._meta.get_field("created_at"), SchedulerProfile._meta.get_field("config")]
    raw = _run(f"SELECT created_at, config FROM {SchedulerProfile._meta.db_table}", [])  # noqa: S608
    converted = rows_converted(raw, fields, connection=connection)
    assert converted == [list(row) for row in SchedulerProfile.objects.values_list("created_at", "config")]
    assert converted[0][1] == {"weights": [0.5, 1.5], "retention": 0.9}
    assert rows_converted(raw, [], connection=connection) == [list(row) for row in raw]


def test_the_preparing_cursor_prepares_and_is_logged_like_any_cursor():
    statement = "SELECT count(*) FROM auth_user WHERE username = %s"
    with CaptureQueriesContext(connection) as captured:
        for name in ("ada", "ben"):
            with preparing_cursor(connection) as cursor:
                cursor.execute(statement, [name])
                assert cursor.fetchone() == (0,)
    assert [query["sql"] for query in captured.captured_queries] == [
        "SELECT count(*) FROM auth_user WHERE username = 'ada'",
        "SELECT count(*) FROM auth_user WHERE username = 'ben'",
    ]
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert sum("FROM auth_user WHERE username = $1" in text for text in prepared) == 1


PRIVATE_PARTS = (
    "klass_info",
    "get_related_populators",
    "_iterable_class",
    "InsertQuery",
    "get_converters",
    "results_iter",
    "ServerBindingCursor",
    "._state.",
    "make_cursor",
)


def test_nothing_else_reaches_below_the_orms_public_api():
    found = [
        f"{path.relative_to(REPO_ROOT)}: {part}"
        for folder in ("apps", "quizsite", "worker")
        for path in (REPO_ROOT / folder).rglob("*.py")
        if path.name != "orm_internals.py" and "migrations" not in path.parts
        for part in PRIVATE_PARTS
        if part in path.read_text(encoding="utf-8")
    ]
    assert not found, "\n".join(found)
