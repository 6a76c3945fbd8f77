"""A model query compiled once and run again with new values: for the few queries every request makes.

Django builds a queryset's SQL anew each time it is evaluated. For a query with joins
(select_related) that costs several times its round trip: the token lookup of every API request
spent about a millisecond compiling for a hundred microseconds on the wire. A PreparedQuery compiles
its queryset once per connection (per thread) with placeholder values, then runs that SQL with each
call's values, and builds the instances as Django's ModelIterable does: the same converters, the
same select_related populators, so what it returns is what the queryset would return.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.db.models import Model, QuerySet
from django.db.models.query import ModelIterable, ValuesListIterable, get_related_populators


@dataclass(frozen=True)
class _Instances:
    """How a row becomes a model instance with its select_related rows attached (None: values_list rows)."""

    init_list: list[str]
    fields_start: int
    fields_end: int
    populators: list[Any]


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple[Any, ...]
    # Where each placeholder's value goes in params.
    slots: tuple[int, ...]
    compiler: Any
    converters: dict[int, Any]
    instances: _Instances | None


_PREPARE_ONLY_WHEN_ASKED = 2**31 - 1


def prepared_cursor(connection: Any) -> Any:
    """A cursor whose statements PostgreSQL keeps prepared on the connection, so it plans each once.

    Django binds parameters on the client and turns psycopg's prepared statements off (they trouble
    transaction-pooling proxies); DATABASE_PREPARED_STATEMENTS=false does without them here too.
    Queries go through Django's cursor wrapper all the same: they are logged and counted.
    """
    if not settings.DATABASE_PREPARED_STATEMENTS:
        return connection.cursor()
    # As Django's own connection.cursor(): the health check, then the connection.
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    if connection.connection.prepare_threshold is None:
        # None turns preparing off altogether; this count is never reached, so only statements
        # asked for by name here are prepared (Django's own cursors bind on the client and never are).
        connection.connection.prepare_threshold = _PREPARE_ONLY_WHEN_ASKED
    with connection.wrap_database_errors:
        raw = _preparing_cursor_class()(connection.connection)
    return _LoggedCursor(raw, connection) if connection.queries_logged else connection.make_cursor(raw)


class _LoggedCursor(CursorDebugWrapper):
    """Django's logging cursor, logging the statement with its values in place.

    Django reads the text it logs from a client-binding cursor's last query, which a prepared
    statement does not leave; the statement is composed from its values here instead.
    """

    def execute(self, sql: Any, params: Any = None) -> Any:
        with self.debug_sql(self.db.ops.compose_sql(sql, params)):
            return CursorWrapper.execute(self, sql, params)


@functools.cache
def _preparing_cursor_class() -> Any:
    # Imported when first needed: Django loads its database backend after settings, not at import time.
    from django.db.backends.postgresql.base import ServerBindingCursor

    class PreparingCursor(ServerBindingCursor):
        """Binds on the server and prepares every statement it runs."""

        def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: Any = None) -> Any:
            return super().execute(query, params, prepare=True, binary=binary)  # type: ignore[misc]

    return PreparingCursor


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
        if compiled is not None and compiled.compiler.connection is connection:
            return compiled
        queryset = self._build(*self._placeholders)
        compiler = queryset.query.get_compiler(using=self._using)
        sql, params = compiler.as_sql()
        params = tuple(params)
        slots = []
        for placeholder in self._placeholders:
            found = [
                index for index, value in enumerate(params) if value == placeholder and type(value) is type(placeholder)
            ]
            if len(found) != 1:
                raise ValueError(f"placeholder {placeholder!r} is not one parameter of the compiled query")
            slots.append(found[0])
        whole = queryset._iterable_class is ModelIterable
        if not (whole or queryset._iterable_class is ValuesListIterable) or (
            whole and (compiler.annotation_col_map or queryset.query.deferred_loading[0])
        ):
            raise ValueError("a prepared query returns whole model instances or values_list rows only")
        instances = None
        if whole:
            select_fields = compiler.klass_info["select_fields"]
            start, end = select_fields[0], select_fields[-1] + 1
            instances = _Instances(
                init_list=[column[0].target.attname for column in compiler.select[start:end]],
                fields_start=start,
                fields_end=end,
                populators=get_related_populators(compiler.klass_info, compiler.select, self._using),
            )
        compiled = _Compiled(
            sql=sql,
            params=params,
            slots=tuple(slots),
            compiler=compiler,
            converters=compiler.get_converters([column[0] for column in compiler.select[: compiler.col_count]]),
            instances=instances,
        )
        cache[id(connection)] = compiled
        return compiled

    def statement(self, *values: Any) -> tuple[str, list[Any]]:
        """The SQL and parameters of `build(*values)`, to run with others in one round trip."""
        if len(values) != len(self._placeholders):
            raise TypeError(f"expected {len(self._placeholders)} values, got {len(values)}")
        compiled = self._compiled()
        params = list(compiled.params)
        for slot, value in zip(compiled.slots, values, strict=True):
            params[slot] = value
        return compiled.sql, params

    def results(self, rows: list[Any]) -> list[Any]:
        """What the queryset gives for these rows of its statement: model instances, or values_list tuples."""
        compiled = self._compiled()
        converted = compiled.compiler.apply_converters(rows, compiled.converters) if compiled.converters else rows
        instances = compiled.instances
        if instances is None:
            return [tuple(row) for row in converted]
        model = compiled.compiler.klass_info["model"]
        found = []
        for row in converted:
            instance = model.from_db(
                self._using, instances.init_list, row[instances.fields_start : instances.fields_end]
            )
            for populator in instances.populators:
                populator.populate(row, instance)
            found.append(instance)
        return found

    def all(self, *values: Any) -> list[Any]:
        """The instances (or values_list rows) the queryset `build(*values)` gives, in its order."""
        sql, params = self.statement(*values)
        with prepared_cursor(connections[self._using]) as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        return self.results(rows)
