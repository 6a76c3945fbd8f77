"""Changes to course content made outside course files (the admin's bulk actions and reordering)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import Case, F, Max, QuerySet, Value, When
from django.utils import timezone

from apps.common.errors import DomainError


class PositionsInvalid(DomainError):
    code = "positions_invalid"


def content_archived_set(*, items: QuerySet[Any], archived: bool) -> int:
    """Archive or restore archivable content; returns how many rows changed."""
    # update() skips auto_now, so updated_at is set here to keep "last changed" honest.
    return items.exclude(archived=archived).update(archived=archived, updated_at=timezone.now())


def positions_park(*, rows: QuerySet[Any]) -> None:
    """Move rows to distinct negative positions, freeing their places under a unique (parent, position).

    PostgreSQL checks a unique constraint row by row during an UPDATE, so rows cannot trade places in
    one statement; parked at -position - 1 they collide with no one on the way to their new place.
    """
    rows.update(position=-F("position") - 1)


def positions_renumber(
    *, model: type[models.Model], parent_field: str, parent_id: Any, ordered_ids: Iterable[Any]
) -> int:
    """Give one parent's rows the positions 0..n-1 in the order of `ordered_ids`; returns how many moved.

    Rows of the parent missing from `ordered_ids` (added meanwhile, or not shown) keep their relative
    order after the named ones, so the positions always end up dense.
    """
    manager: Any = model._default_manager
    with transaction.atomic():
        # Locked in position order, so two reorders of one parent queue up instead of interleaving.
        current: list[tuple[Any, int]] = list(
            manager.select_for_update()
            .filter(**{parent_field: parent_id})
            .order_by("position", "pk")
            .values_list("pk", "position")
        )
        held = dict(current)
        wanted = _ids_of(model, ordered_ids)
        strangers = [pk for pk in wanted if pk not in held]
        if strangers:
            raise PositionsInvalid(
                f"{model._meta.verbose_name_plural} {strangers} do not belong to this "
                f"{_parent_name(model, parent_field)}; reload the page and try again."
            )
        listed = set(wanted)
        order = [*wanted, *(pk for pk, _ in current if pk not in listed)]
        targets = {pk: position for position, pk in enumerate(order) if held[pk] != position}
        if not targets:
            return 0
        moved = manager.filter(pk__in=list(targets))
        positions_park(rows=moved)
        changes: dict[str, Any] = {
            "position": Case(*(When(pk=pk, then=Value(position)) for pk, position in targets.items()))
        }
        if any(field.name == "updated_at" for field in model._meta.concrete_fields):
            # update() skips auto_now, so updated_at is set here to keep "last changed" honest.
            changes["updated_at"] = timezone.now()
        moved.update(**changes)
        return len(targets)


def positions_permute(
    *, model: type[models.Model], parent_field: str, ordered_ids: Sequence[Any], parent_id: Any = None
) -> int:
    """Put the named rows in the given order within the places they hold now; returns how many moved.

    The named rows must share one parent (`parent_id` when given). Rows of that parent not named keep
    their places, so rows hidden from a filtered list (archived ones, another page, a concept's links
    among its course's) stay where they are. The parent's positions end up dense.
    """
    wanted = _ids_of(model, ordered_ids)
    parent_column = _parent_column(model, parent_field)
    manager: Any = model._default_manager
    with transaction.atomic():
        parents = set(manager.filter(pk__in=wanted).values_list(parent_column, flat=True))
        if parent_id is not None:
            parents.add(parent_id)
        if not parents:
            if wanted:
                raise PositionsInvalid(f"These {model._meta.verbose_name_plural} no longer exist; reload the page.")
            return 0
        if len(parents) > 1:
            raise PositionsInvalid(
                f"Rows can be reordered only within one {_parent_name(model, parent_field)} at a time; "
                "filter the list to one first."
            )
        (parent_id,) = parents
        current = list(
            manager.select_for_update()
            .filter(**{parent_column: parent_id})
            .order_by("position", "pk")
            .values_list("pk", flat=True)
        )
        listed = set(wanted)
        missing = listed - set(current)
        if missing:
            raise PositionsInvalid(
                f"{model._meta.verbose_name_plural} {sorted(missing)} no longer exist; reload the page."
            )
        incoming = iter(wanted)
        order = [next(incoming) if pk in listed else pk for pk in current]
        return positions_renumber(model=model, parent_field=parent_column, parent_id=parent_id, ordered_ids=order)


def positioned_save(*, obj: models.Model, parent_field: str) -> None:
    """Save a row edited on its own page: a new row, or one moved to another parent, goes after that parent's last.

    The parent it left is renumbered, so both parents keep dense positions.
    """
    model = type(obj)
    parent_column = _parent_column(model, parent_field)
    parent_id = _parent_id_of(obj, parent_field)
    manager: Any = model._default_manager
    with transaction.atomic():
        previous_parent_id = (
            manager.filter(pk=obj.pk).values_list(parent_column, flat=True).first() if obj.pk is not None else None
        )
        if previous_parent_id is not None and previous_parent_id == parent_id:
            obj.save()
            return
        last = manager.filter(**{parent_column: parent_id}).aggregate(last=Max("position"))["last"]
        setattr(obj, "position", 0 if last is None else last + 1)  # noqa: B010 - any positioned model
        obj.save()
        if previous_parent_id is not None:
            positions_renumber(model=model, parent_field=parent_column, parent_id=previous_parent_id, ordered_ids=[])


def positioned_delete(*, rows: QuerySet[Any], parent_field: str) -> int:
    """Delete rows and renumber the parents they leave, so those keep dense positions; returns how many went."""
    model = rows.model
    parent_column = _parent_column(model, parent_field)
    with transaction.atomic():
        parent_ids = sorted(set(rows.values_list(parent_column, flat=True)))
        _, deleted = rows.delete()
        for parent_id in parent_ids:
            positions_renumber(model=model, parent_field=parent_column, parent_id=parent_id, ordered_ids=[])
    return deleted.get(model._meta.label, 0)


def _parent_column(model: type[models.Model], parent_field: str) -> str:
    """What to filter and read the parent by: a foreign key's column, or a lookup path through one."""
    first, *rest = parent_field.split("__")
    parent = model._meta.get_field(first)
    if not isinstance(parent, models.ForeignKey):
        raise TypeError(f"{model.__name__}.{first} is not a foreign key.")
    return parent_field if rest else parent.attname


def _parent_id_of(obj: models.Model, parent_field: str) -> Any:
    *hops, last = parent_field.split("__")
    holder: Any = obj
    for hop in hops:
        holder = getattr(holder, hop)
    return getattr(holder, f"{last}_id")


def _ids_of(model: type[models.Model], ids: Iterable[Any]) -> list[Any]:
    """Primary keys as the database gives them back, each once, in the order first named."""
    pk_field = model._meta.pk
    assert pk_field is not None  # noqa: S101 - every concrete model has a primary key
    seen: dict[Any, None] = {}
    for raw in ids:
        try:
            pk = pk_field.to_python(raw)
        except ValidationError:
            pk = None
        if pk is None:
            raise PositionsInvalid(f"{raw!r} is not a {model._meta.verbose_name} id.")
        seen.setdefault(pk, None)
    return list(seen)


def _parent_name(model: type[models.Model], parent_field: str) -> str:
    related: Any = model
    for hop in parent_field.split("__"):
        related = related._meta.get_field(hop).related_model
    return str(related._meta.verbose_name)
