"""A model query compiled once and run again with new values: for the few queries every request makes.

Django builds a queryset's SQL anew each time it is evaluated. For a query with joins
(select_related) that costs several times its round trip: the token lookup of every API request
spent about a millisecond compiling for a hundred microseconds on the wire. A PreparedQuery compiles
its queryset once per connection (per thread) with placeholder values, then runs that SQL with each
call's values, and builds the instances as Django's ModelIterable does: the same converters, the
same select_related populators, so what it returns is what the queryset would return (the ORM's
parts below its public API that this needs are apps.common.orm_internals').
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model, QuerySet

from apps.common.orm_internals import CompiledQuery, preparing_cursor, query_compile


@dataclass(frozen=True)
class _Compiled:
    query: CompiledQuery
    # Where each placeholder's value goes in the query's parameters.
    slots: tuple[int, ...]


def prepared_cursor(connection: Any) -> Any:
    """A cursor whose statements PostgreSQL keeps prepared on the connection, so it plans each once.

    Django binds parameters on the client and turns psycopg's prepared statements off (they trouble
    transaction-pooling proxies); DATABASE_PREPARED_STATEMENTS=false does without them here too.
    Queries go through Django's cursor wrapper all the same: they are logged and counted.
    """
    if not settings.DATABASE_PREPARED_STATEMENTS:
        return connection.cursor()
    return preparing_cursor(connection)


class PreparedQuery[M: Model]:
    """`build(*values)` gives the queryset; `placeholders` are values it is compiled with, each unique.

    Each placeholder must reach the SQL parameters unchanged (a string compared with a text column, an
    integer with an integer one), so that its place among them can be found; that is checked when
    compiling. The queryset gives whole model instances or values_list rows (no annotations, no
    deferred fields) and must not be empty by construction.
    """

    def __init__(
        self, build: Callable[..., QuerySet[M, Any]], *placeholders: Any, using: str = DEFAULT_DB_ALIAS
    ) -> None:
        self._build = build
        self._placeholders = placeholders
        self._using = using
        self._local = threading.local()

    def _compiled(self) -> _Compiled:
        connection = connections[self._using]
        cache: dict[int, _Compiled] = vars(self._local).setdefault("by_connection", {})
        compiled = cache.get(id(connection))
        if compiled is not None and compiled.query.connection is connection:
            return compiled
        query = query_compile(self._build(*self._placeholders), using=self._using)
        if query is None:
            raise ValueError("a prepared query must not be empty by construction")
        slots = []
        for placeholder in self._placeholders:
            found = [
                index
                for index, value in enumerate(query.params)
                if value == placeholder and type(value) is type(placeholder)
            ]
            if len(found) != 1:
                raise ValueError(f"placeholder {placeholder!r} is not one parameter of the compiled query")
            slots.append(found[0])
        compiled = _Compiled(query=query, slots=tuple(slots))
        cache[id(connection)] = compiled
        return compiled

    def statement(self, *values: Any) -> tuple[str, list[Any]]:
        """The SQL and parameters of `build(*values)`, to run with others in one round trip."""
        if len(values) != len(self._placeholders):
            raise TypeError(f"expected {len(self._placeholders)} values, got {len(values)}")
        compiled = self._compiled()
        params = list(compiled.query.params)
        for slot, value in zip(compiled.slots, values, strict=True):
            params[slot] = value
        return compiled.query.sql, params

    def results(self, rows: list[Any]) -> list[Any]:
        """What the queryset gives for these rows of its statement: model instances, or values_list tuples."""
        return self._compiled().query.results(rows)

    def all(self, *values: Any) -> list[Any]:
        """The instances (or values_list rows) the queryset `build(*values)` gives, in its order."""
        sql, params = self.statement(*values)
        with prepared_cursor(connections[self._using]) as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        return self.results(rows)
