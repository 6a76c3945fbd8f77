"""Saving an admin page as a browser does, without edits, changes no row and logs nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.db import models
from django.db.models import Count
from django.test import Client
from django.urls import reverse

from apps.content.models import Card, Deck, LessonBlock
from tests.support.admin_forms import form_submission
from tests.support.course_files import content_rows

pytestmark = pytest.mark.django_db

CONTENT_ADMINS: list[tuple[type[models.Model], admin.ModelAdmin]] = sorted(
    ((model, model_admin) for model, model_admin in admin.site._registry.items() if model._meta.app_label == "content"),
    key=lambda pair: pair[0].__name__,
)


def sample_rows(model: type[models.Model], model_admin: admin.ModelAdmin) -> list[models.Model]:
    """The first and last rows, and for a page with inlines the row with the most inline rows."""
    rows = model._default_manager.order_by("pk")
    picked = [rows.first(), rows.last()]
    inlines = list(model_admin.inlines)
    if inlines:
        inline = inlines[0]
        relation = next(
            rel
            for rel in model._meta.related_objects
            if rel.related_model is inline.model
            and not rel.many_to_many
            and (inline.fk_name is None or rel.field.name == inline.fk_name)
        )
        picked.append(model._default_manager.annotate(children=Count(relation.name)).order_by("-children", "pk")[0])
    unique = {row.pk: row for row in picked if row is not None}
    return list(unique.values())


def change_url(obj: models.Model) -> str:
    return reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])


def post_unchanged(client: Client, obj: models.Model, *, button: str = "_save") -> Any:
    page = client.get(change_url(obj))
    assert page.status_code == 200
    data: dict[str, Any] = form_submission(page.content.decode(), f"{obj._meta.model_name}_form")
    data[button] = ["Save"]
    return client.post(change_url(obj), data)


@pytest.mark.parametrize(("model", "model_admin"), CONTENT_ADMINS, ids=[model.__name__ for model, _ in CONTENT_ADMINS])
@pytest.mark.parametrize("button", ["_save", "_continue"])
def test_saving_a_change_page_untouched_changes_nothing(staff_client, shipped_course, model, model_admin, button):
    rows = sample_rows(model, model_admin)
    assert rows, f"the shipped course has no {model.__name__}"
    for obj in rows:
        before, logged = content_rows(), LogEntry.objects.count()
        response = post_unchanged(staff_client, obj, button=button)
        assert response.status_code == 302, response.context["adminform"].form.errors if response.context else ""
        after = content_rows()
        changed = {
            label: [row for row in rows_after if row not in before[label]]
            for label, rows_after in after.items()
            if rows_after != before[label]
        }
        assert not changed, f"{model.__name__} {obj.pk}: {changed}"
        assert LogEntry.objects.count() == logged


def test_editing_one_card_on_the_deck_page_changes_that_card_only(staff_client, shipped_course):
    deck = Deck.objects.annotate(size=Count("cards")).order_by("-size")[0]
    card = deck.cards.order_by("position")[0]
    page = staff_client.get(change_url(deck))
    data: dict[str, Any] = form_submission(page.content.decode(), "deck_form")
    index = next(i for i in range(len(deck.cards.all())) if data[f"cards-{i}-id"] == [str(card.pk)])
    data[f"cards-{index}-term"] = ["  A renamed term  "]
    data["_continue"] = ["Save and continue editing"]
    before, logged = content_rows(), LogEntry.objects.count()

    response = staff_client.post(change_url(deck), data)

    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else ""
    after = content_rows()
    changed_labels = [label for label in after if after[label] != before[label]]
    assert changed_labels == [Card._meta.label]
    changed_rows = [row for row in after[Card._meta.label] if row not in before[Card._meta.label]]
    assert [row["id"] for row in changed_rows] == [card.pk]
    old = next(row for row in before[Card._meta.label] if row["id"] == card.pk)
    assert {name for name in old if old[name] != changed_rows[0][name]} == {"term", "updated_at"}
    assert changed_rows[0]["term"] == "A renamed term"
    assert LogEntry.objects.count() == logged + 1


def test_a_block_payload_is_shown_indented_and_saving_it_so_changes_nothing(staff_client, shipped_course):
    block = LessonBlock.objects.filter(kind="code").first()
    assert block is not None
    submitted = form_submission(staff_client.get(change_url(block)).content.decode(), "lessonblock_form")
    # One key per line: the code's own line breaks stay escaped inside its string.
    assert submitted["payload"][0].startswith('{\r\n  "')
    before = content_rows()
    response = staff_client.post(change_url(block), {**submitted, "_save": ["Save"]})
    assert response.status_code == 302
    assert content_rows() == before
