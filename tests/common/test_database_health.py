"""The PostgreSQL health check: a reused connection is checked without a statement, and a dead one replaced."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from django.db import connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.postgresql import base as postgresql_base

pytestmark = pytest.mark.django_db


@pytest.fixture
def other() -> Iterator[BaseDatabaseWrapper]:
    """A second connection to the test database, as a web process holds between requests."""
    wrapper = connections.create_connection("default")
    wrapper.settings_dict["NAME"] = connection.settings_dict["NAME"]
    wrapper.ensure_connection()
    yield wrapper
    wrapper.close()


def _last_statement(pid: int) -> str:
    with connection.cursor() as cursor:
        # Activity is read from a snapshot kept for the rest of the transaction, unless cleared.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return str(row[0]) if row else ""


def test_a_healthy_idle_connection_is_usable_and_nothing_is_sent(other):
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    for _ in range(3):
        assert other.is_usable()
    assert _last_statement(pid) == "SELECT pg_backend_pid()"
    # Django's own check sends a statement, which this one would have shown.
    assert postgresql_base.DatabaseWrapper.is_usable(other)
    assert _last_statement(pid) == "SELECT 1"


def test_a_connection_the_server_ended_is_replaced_before_the_next_request_uses_it(other):
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    # The server's farewell reaches the socket a moment later.
    deadline = time.monotonic() + 10
    while other.is_usable() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not other.is_usable()

    # As at the start of a request: the failed check closes it, and the next query opens a new one.
    other.health_check_done = False
    other.close_if_health_check_failed()
    assert other.connection is None
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid


def test_a_closed_connection_is_not_usable(other):
    other.connection.close()
    assert not other.is_usable()
