"""Queries compiled once: the same instances as the queryset, counted like any query, prepared on PostgreSQL."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from apps.accounts.devices import device_token_issue
from apps.accounts.models import DeviceToken
from apps.common.prepared import PreparedQuery
from apps.srs.models import SchedulingSettings
from apps.srs.settings.services import scheduling_settings_update

pytestmark = pytest.mark.django_db


def _token_query(key: str):
    return DeviceToken.objects.select_related("user", "user__scheduling_settings__profile").filter(token_key=key)


def _learner(name: str, *, settings: bool) -> DeviceToken:
    user = get_user_model().objects.create_user(username=name, password="a-long-password-1")
    if settings:
        scheduling_settings_update(learner=user, changes={"desired_retention": 0.85})
    return device_token_issue(user=user, device_name=None).device


def _prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_it_returns_what_the_queryset_returns_with_the_joined_rows_attached():
    with_settings, without = _learner("ada", settings=True), _learner("ben", settings=False)
    query = PreparedQuery(_token_query, "placeholder-key")
    for token in (with_settings, without):
        (found,) = query.all(token.token_key)
        (expected,) = list(_token_query(token.token_key))
        assert (found.digest, found.user_id, found.created) == (expected.digest, expected.user_id, expected.created)
        user_fields = [field.attname for field in get_user_model()._meta.concrete_fields]
        with CaptureQueriesContext(connection) as captured:
            assert [getattr(found.user, f) for f in user_fields] == [getattr(expected.user, f) for f in user_fields]
            settings = getattr(found.user, "scheduling_settings", None)
            settings_expected = getattr(expected.user, "scheduling_settings", None)
            if settings_expected is None:
                assert settings is None
            else:
                assert isinstance(settings, SchedulingSettings)
                fields = [field.attname for field in SchedulingSettings._meta.concrete_fields]
                assert [getattr(settings, f) for f in fields] == [getattr(settings_expected, f) for f in fields]
                assert settings.profile == settings_expected.profile
        assert captured.captured_queries == []
    assert query.all("no-such-key") == []


def test_it_is_counted_as_a_query_and_prepared_once_on_postgresql():
    token = _learner("cy", settings=True)
    query = PreparedQuery(_token_query, "placeholder-key")
    with CaptureQueriesContext(connection) as captured:
        query.all(token.token_key)
        query.all(token.token_key)
    assert len(captured.captured_queries) == 2
    # Logged as any query is: the statement with its values.
    assert all(token.token_key in logged["sql"] for logged in captured.captured_queries), captured.captured_queries
    assert sum('"accounts_devicetoken"' in statement for statement in _prepared_statements()) == 1


def test_prepared_statements_can_be_turned_off():
    token = _learner("di", settings=False)
    with override_settings(DATABASE_PREPARED_STATEMENTS=False):
        assert PreparedQuery(lambda key: DeviceToken.objects.filter(token_key=key), "placeholder-key").all(
            token.token_key
        )
    assert not any(
        statement.startswith('SELECT "accounts_devicetoken"."digest", "accounts_devicetoken"."token_key"')
        for statement in _prepared_statements()
    )


def test_a_placeholder_that_does_not_reach_the_parameters_is_refused():
    query = PreparedQuery(lambda key: DeviceToken.objects.filter(token_key__startswith=key), "placeholder-key")
    with pytest.raises(ValueError, match="placeholder"):
        query.all("x")


def test_values_list_rows_and_a_statement_to_run_elsewhere():
    token = _learner("ed", settings=False)
    query = PreparedQuery(
        lambda key: DeviceToken.objects.filter(token_key=key).values_list("token_key", "user_id"), "placeholder-key"
    )
    assert query.all(token.token_key) == list(
        DeviceToken.objects.filter(token_key=token.token_key).values_list("token_key", "user_id")
    )
    sql, params = query.statement(token.token_key)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        assert query.results(cursor.fetchall()) == [(token.token_key, token.user_id)]
