"""The one place the project reaches below the ORM's public API: compiling a queryset once, an INSERT built as
bulk_create builds it, the ORM's conversion of values read by hand-written SQL, and a cursor that prepares.

Each saves a measured cost on the request path (apps.common.prepared, the study queue, recording reviews):
the public API would compile the same SQL anew on every call. The parts of Django used here carry no
promise between releases: the compiler's `klass_info`, `select`, `get_converters`; `InsertQuery`;
`get_related_populators`; a queryset's `_iterable_class`; a model's `_state`; the PostgreSQL backend's
`ServerBindingCursor`; how a connection makes its cursors. So everything that touches them is here and
nowhere else, and tests/common/test_orm_internals.py holds each function to what the public API gives:
a Django upgrade that changes one fails there, by name.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.db.models import AutoField, Model, QuerySet
from django.db.models.constants import OnConflict
from django.db.models.query import ModelIterable, ValuesListIterable, get_related_populators
from django.db.models.sql import InsertQuery


@dataclass(frozen=True)
class _Instances:
    """How a row becomes a model instance with its select_related rows attached."""

    model: type[Model]
    init_list: list[str]
    fields_start: int
    fields_end: int
    populators: list[Any]


@dataclass(frozen=True)
class CompiledQuery:
    """A queryset's SQL and parameters, and how its rows become what the queryset would give."""

    sql: str
    params: tuple[Any, ...]
    connection: Any
    _compiler: Any
    _converters: dict[int, Any]
    _instances: _Instances | None
    _using: str

    def results(self, rows: Sequence[Any]) -> list[Any]:
        """Model instances (select_related ones attached), or values_list tuples, as the queryset builds them."""
        converted = self._compiler.apply_converters(rows, self._converters) if self._converters else rows
        instances = self._instances
        if instances is None:
            return [tuple(row) for row in converted]
        found = []
        for row in converted:
            instance = instances.model.from_db(
                self._using, instances.init_list, row[instances.fields_start : instances.fields_end]
            )
            for populator in instances.populators:
                populator.populate(row, instance)
            found.append(instance)
        return found


def query_compile(queryset: QuerySet[Any, Any], *, using: str) -> CompiledQuery | None:
    """Compile a queryset of whole instances (no annotations, no deferred fields) or values_list rows.

    None when the queryset can match nothing (Django's EmptyResultSet: `pk__in=[]`). ValueError for a
    queryset of another shape, whose rows this could not build as Django does."""
    compiler = queryset.query.get_compiler(using=using)
    try:
        sql, params = compiler.as_sql()
    except EmptyResultSet:
        return None
    whole = queryset._iterable_class is ModelIterable
    if not (whole or queryset._iterable_class is ValuesListIterable) or (
        whole and (compiler.annotation_col_map or queryset.query.deferred_loading[0])
    ):
        raise ValueError("a compiled query returns whole model instances or values_list rows only")
    instances = None
    if whole:
        select_fields = compiler.klass_info["select_fields"]
        start, end = select_fields[0], select_fields[-1] + 1
        instances = _Instances(
            model=compiler.klass_info["model"],
            init_list=[column[0].target.attname for column in compiler.select[start:end]],
            fields_start=start,
            fields_end=end,
            populators=get_related_populators(compiler.klass_info, compiler.select, using),
        )
    return CompiledQuery(
        sql=sql,
        params=tuple(params),
        connection=compiler.connection,
        _compiler=compiler,
        _converters=compiler.get_converters([column[0] for column in compiler.select[: compiler.col_count]]),
        _instances=instances,
        _using=using,
    )


def insert_statement(
    model: type[Model],
    rows: Sequence[Model],
    *,
    connection: Any,
    with_id: bool = False,
    returning: bool = False,
    upsert: tuple[Sequence[str], Sequence[str]] | None = None,
) -> tuple[str, tuple[Any, ...]]:
    """The INSERT bulk_create runs for `rows` (ids included `with_id`), RETURNING their ids with `returning`.

    `upsert` is (the unique fields, the fields to overwrite): ON CONFLICT (unique) DO UPDATE, as
    bulk_create(update_conflicts=True, …) writes it."""
    fields = [field for field in model._meta.concrete_fields if with_id or not isinstance(field, AutoField)]
    unique, update = upsert if upsert is not None else ((), ())
    query = InsertQuery(
        model,
        on_conflict=OnConflict.UPDATE if upsert is not None else None,
        update_fields=[model._meta.get_field(name) for name in update] if upsert is not None else None,
        unique_fields=[model._meta.get_field(name) for name in unique] if upsert is not None else None,
    )
    query.insert_values(fields, list(rows))
    compiler = query.get_compiler(connection=connection)
    compiler.returning_fields = [model._meta.pk] if returning else None
    ((sql, params),) = compiler.as_sql()
    return sql, tuple(params)


def rows_stored(rows: Sequence[Model], *, using: str) -> None:
    """Mark instances written by hand-built SQL as loaded from the database, as bulk_create leaves them."""
    for row in rows:
        row._state.adding = False
        row._state.db = using


def rows_converted(rows: Sequence[Sequence[Any]], fields: Sequence[Any], *, connection: Any) -> list[list[Any]]:
    """Rows of hand-written SQL, each column converted as the ORM converts a value of the model field in
    `fields` (a timestamp made aware, JSON decoded): what values_list would have given."""
    if not fields:
        return [list(row) for row in rows]
    compiler = fields[0].model._default_manager.all().query.get_compiler(connection=connection)
    converters = compiler.get_converters([field.get_col(field.model._meta.db_table) for field in fields])
    return [list(row) for row in compiler.apply_converters(rows, converters)] if converters else list(map(list, rows))


# psycopg prepares a statement once it has run this often; never reached, so only what is asked for is.
_PREPARE_ONLY_WHEN_ASKED = 2**31 - 1


def preparing_cursor(connection: Any) -> Any:
    """A cursor of Django's connection whose statements PostgreSQL keeps prepared on it, so it plans each once.

    Made as Django's own connection.cursor() makes one (the health check, then the connection, errors
    wrapped, queries logged and counted), around a cursor that binds on the server and prepares."""
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
    """A psycopg cursor class that binds on the server and prepares every statement it runs.

    Imported when first needed: Django loads its database backend after settings, not at import time."""
    from django.db.backends.postgresql.base import ServerBindingCursor

    class PreparingCursor(ServerBindingCursor):
        def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: Any = None) -> Any:
            return super().execute(query, params, prepare=True, binary=binary)  # type: ignore[misc]

    return PreparingCursor
