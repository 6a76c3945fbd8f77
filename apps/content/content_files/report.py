"""What a load of course files changed: every item created, updated, archived or deleted, and counts per kind."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from django.db import models
from django.utils.text import Truncator

Action = Literal["created", "updated", "archived", "deleted"]
ACTIONS: tuple[Action, ...] = ("created", "updated", "archived", "deleted")
_WOULD_BE = {action: f"would be {action}" for action in ACTIONS}
# Long enough to recognise a card by its term or a question by its prompt; short enough that a report of
# thousands of items stays small in the session that carries it to the report page.
LABEL_MAX_CHARS = 80


def item_label(obj: models.Model) -> str:
    """How a person recognises an item besides its slug: its term, title or name, or its prompt's start."""
    for name in ("term", "title", "name", "prompt"):
        value = getattr(obj, name, None)
        if isinstance(value, str) and value.strip():
            return Truncator(" ".join(value.split())).chars(LABEL_MAX_CHARS)
    return ""


@dataclass
class ModelCounts:
    created: int = 0
    updated: int = 0
    archived: int = 0
    deleted: int = 0
    # Written only because rows before them were inserted or removed: same content, same order among their siblings.
    renumbered: int = 0
    unchanged: int = 0

    @property
    def changed(self) -> int:
        return self.created + self.updated + self.archived + self.deleted + self.renumbered

    def text(self, *, dry_run: bool = False) -> str:
        """ "1 created, 2 updated, 30 unchanged": the non-zero counts, in the future conditional for a dry run."""
        parts = [
            f"{getattr(self, action)} {_WOULD_BE[action] if dry_run else action}"
            for action in ACTIONS
            if getattr(self, action)
        ]
        if self.renumbered:
            parts.append(f"{self.renumbered} {'would be renumbered' if dry_run else 'renumbered'}")
        if self.unchanged:
            parts.append(f"{self.unchanged} unchanged")
        return ", ".join(parts) or "none"


@dataclass
class ReportItem:
    """One item the load wrote: its kind ("card"), where it is (`deck-slug/card-slug`) and what it is called."""

    kind: str
    group: str
    action: Action
    path: str
    label: str = ""
    fields: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        label = f" “{self.label}”" if self.label and self.label != self.path.rsplit("/", 1)[-1] else ""
        return f"{self.kind} {self.path}{label}"

    def outcome(self, *, dry_run: bool = False) -> str:
        """ "updated: term, definition", or "would be created"."""
        verb = _WOULD_BE[self.action] if dry_run else self.action
        return f"{verb}: {', '.join(self.fields)}" if self.action == "updated" and self.fields else verb

    def text(self, *, dry_run: bool = False) -> str:
        return f"{self.name} {self.outcome(dry_run=dry_run)}"


@dataclass
class ReportGroup:
    """The items of one kind, as listed: at most the limit asked for, and how many more there are."""

    name: str
    counts: ModelCounts
    items: list[ReportItem]
    more: int
    dry_run: bool = False

    @property
    def summary(self) -> str:
        return self.counts.text(dry_run=self.dry_run)

    @property
    def rows(self) -> list[tuple[ReportItem, str]]:
        """Each listed item with what happened to it, for a table."""
        return [(item, item.outcome(dry_run=self.dry_run)) for item in self.items]

    @property
    def lines(self) -> list[str]:
        """The kind's counts, then one indented line per listed item, then "… and N more"."""
        lines = [f"{self.name}: {self.summary}", *(f"  {item.name} {outcome}" for item, outcome in self.rows)]
        return [*lines, f"  … and {self.more} more"] if self.more else lines


@dataclass
class LoadReport:
    courses: list[str] = field(default_factory=list)
    counts: dict[str, ModelCounts] = field(default_factory=dict)
    items: list[ReportItem] = field(default_factory=list)
    dry_run: bool = False
    # Per group, items left out when the report was stored with a limit (to_dict), still counted in `counts`.
    omitted: dict[str, int] = field(default_factory=dict)
    # The singular of each group's name, for "1 course".
    singular: dict[str, str] = field(default_factory=dict)
    _by_path: dict[tuple[str, str], ReportItem] = field(default_factory=dict, repr=False, compare=False)

    def for_model(self, model: type[models.Model]) -> ModelCounts:
        group = str(model._meta.verbose_name_plural)
        self.singular.setdefault(group, str(model._meta.verbose_name))
        return self.counts.setdefault(group, ModelCounts())

    def count_text(self, count: int, group: str) -> str:
        """ "1 card", "2 cards"."""
        return f"{count} {self.singular.get(group, group) if count == 1 else group}"

    def record(
        self, model: type[models.Model], *, action: Action, path: str, label: str = "", fields: list[str] | None = None
    ) -> None:
        """Note one item's change; a second change of the same item adds its fields to the first."""
        group = str(model._meta.verbose_name_plural)
        item = self._by_path.get((group, path))
        if item is not None:
            # A created or archived item's other changes are part of that; only an update lists fields.
            if item.action == "updated":
                item.fields += [name for name in fields or [] if name not in item.fields]
            return
        item = ReportItem(
            kind=str(model._meta.verbose_name),
            group=group,
            action=action,
            path=path,
            label=label,
            fields=list(fields or []),
        )
        self.items.append(item)
        self._by_path[(group, path)] = item
        counts = self.for_model(model)
        setattr(counts, action, getattr(counts, action) + 1)

    @property
    def changed(self) -> bool:
        return any(counts.changed for counts in self.counts.values())

    @property
    def unchanged_text(self) -> str:
        """ "1 course, 35 cards": the kinds that did not change at all."""
        return ", ".join(
            self.count_text(counts.unchanged, name)
            for name, counts in self.counts.items()
            if counts.unchanged and not counts.changed
        )

    def lines(self) -> list[str]:
        """One line of counts per kind: "cards: 1 created, 1 updated, 30 unchanged"."""
        return [f"{name}: {counts.text(dry_run=self.dry_run)}" for name, counts in self.counts.items()]

    def groups(self, *, limit: int | None = None) -> list[ReportGroup]:
        """The kinds that changed, each with its items (created, updated, archived, deleted), at most `limit`."""
        by_group: dict[str, list[ReportItem]] = {}
        for item in self.items:
            by_group.setdefault(item.group, []).append(item)
        groups = []
        for name, counts in self.counts.items():
            if not counts.changed:
                continue
            items = sorted(by_group.get(name, []), key=lambda item: ACTIONS.index(item.action))
            listed = items if limit is None else items[:limit]
            more = len(items) - len(listed) + self.omitted.get(name, 0)
            groups.append(ReportGroup(name, counts, listed, more, dry_run=self.dry_run))
        return groups

    def item_lines(self, *, limit: int | None = None) -> list[str]:
        """The whole report as text: each kind that changed with its counts and items, then the unchanged kinds.

        Past `limit` items of a kind, one "… and N more" line stands for the rest.
        """
        lines = [line for group in self.groups(limit=limit) for line in group.lines]
        if self.unchanged_text:
            lines.append(f"unchanged: {self.unchanged_text}")
        return lines

    def to_dict(self, *, limit: int | None = None) -> dict[str, Any]:
        """Plain data (slugs, names and field names), with at most `limit` items of each kind."""
        items: list[dict[str, Any]] = []
        omitted = dict(self.omitted)
        for group in self.groups(limit=limit):
            items += [asdict(item) for item in group.items]
            if group.more:
                omitted[group.name] = group.more
        return {
            "courses": list(self.courses),
            "dry_run": self.dry_run,
            "counts": {name: asdict(counts) for name, counts in self.counts.items()},
            "items": items,
            "omitted": omitted,
            "singular": dict(self.singular),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LoadReport:
        report = cls(
            courses=list(data["courses"]),
            counts={name: ModelCounts(**counts) for name, counts in data["counts"].items()},
            items=[ReportItem(**item) for item in data["items"]],
            dry_run=bool(data["dry_run"]),
            omitted={name: int(count) for name, count in data["omitted"].items()},
            singular=dict(data["singular"]),
        )
        report._by_path = {(item.group, item.path): item for item in report.items}
        return report
