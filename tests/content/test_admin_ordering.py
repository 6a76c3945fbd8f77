"""Drag-and-drop ordering in the content admin: one save reorders, positions stay dense, archived rows filtered."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import models
from django.test import Client

from apps.content.content_files.export import course_doc_build, course_doc_to_yaml
from apps.content.content_files.load import content_sources_load
from apps.content.content_files.source import ContentSource
from apps.content.models import (
    Card,
    Choice,
    Concept,
    ConceptLink,
    Course,
    Deck,
    ExplorerRegion,
    ExplorerScene,
    Lesson,
    LessonBlock,
    LessonSection,
    Question,
)
from apps.content.services import PositionsInvalid, positions_permute, positions_renumber
from tests.support.admin_forms import admin_url, change_form_data

pytestmark = pytest.mark.django_db

COURSE_YAML = """\
version: 1
slug: order-course
title: Ordering
lessons:
  - slug: ord-lesson
    title: Lesson
    sections:
      - slug: s1
        title: S1
        blocks:
          - {kind: prose, text: one}
          - {kind: prose, text: two}
          - {kind: prose, text: three}
      - {slug: s2, title: S2, blocks: [{kind: prose, text: x}]}
      - {slug: s3, title: S3, blocks: [{kind: prose, text: y}]}
    decks:
      - slug: ord-deck
        title: Deck
        cards:
          - {slug: a, term: alpha, definition: First letter}
          - {slug: b, term: beta, definition: Second letter}
          - {slug: c, term: gamma, definition: Third letter}
          - {slug: d, term: delta, definition: Fourth letter}
      - slug: ord-other
        title: Other deck
        cards:
          - {slug: z, term: omega, definition: Last letter}
    questions:
      - slug: ord-q
        kind: single_choice
        prompt: P?
        explanation: E
        choices: [{key: a, text: A, correct: true}, {key: b, text: B}, {key: c, text: C}]
concepts:
  - slug: letters
    name: Letters
    definition: Greek
    cards: [ord-deck/a, ord-deck/b, ord-deck/c, ord-deck/d, ord-other/z]
  - {slug: vowels, name: Vowels, definition: Sounds}
  - {slug: alphabet, name: Alphabet, definition: All}
links:
  - {source: letters, target: alphabet, kind: part_of}
  - {source: vowels, target: letters, kind: part_of}
  - {source: letters, target: vowels, kind: related}
scenes:
  - slug: ord-scene
    title: Scene
    model_asset: m.glb
    regions:
      - {slug: r1, title: R1, description: D}
      - {slug: r2, title: R2, description: D}
      - {slug: r3, title: R3, description: D}
"""


@pytest.fixture
def course(db) -> Course:
    content_sources_load(sources=[ContentSource("order.yaml", COURSE_YAML)])
    return Course.objects.get(slug="order-course")


@pytest.fixture
def deck(course) -> Deck:
    return Deck.objects.get(slug="ord-deck")


def ordered(rows: models.QuerySet[Any], name: str = "slug") -> list[Any]:
    return list(rows.order_by("position").values_list(name, flat=True))


def positions(rows: models.QuerySet[Any]) -> list[int]:
    return list(rows.order_by("position").values_list("position", flat=True))


def inline_prefix(response: Any, model: type[models.Model]) -> str:
    (formset,) = [
        inline.formset for inline in response.context["inline_admin_formsets"] if inline.formset.model is model
    ]
    return str(formset.prefix)


def drag(data: dict[str, Any], prefix: str, order: list[Any]) -> None:
    """What the drag-and-drop script leaves in the hidden inputs: each row's place in `order`, from 1."""
    for index in range(int(data[f"{prefix}-TOTAL_FORMS"])):
        row_id = data.get(f"{prefix}-{index}-id")
        if row_id:
            data[f"{prefix}-{index}-position"] = str(order.index(int(row_id)) + 1)


def card_ids(*slugs: str) -> list[int]:
    by_slug = dict(Card.objects.filter(deck__slug="ord-deck").values_list("slug", "pk"))
    return [by_slug[slug] for slug in slugs]


def new_card_row(prefix: str, index: int) -> dict[str, Any]:
    return {
        f"{prefix}-{index}-slug": "new",
        f"{prefix}-{index}-term": "epsilon",
        f"{prefix}-{index}-definition": "Fifth letter",
        f"{prefix}-{index}-concepts": [str(Concept.objects.get(slug="letters").pk)],
    }


def save_deck_page(client: Client, deck: Deck, order: list[int], extra: dict[str, Any] | None = None) -> Any:
    url = admin_url(Deck, "change", deck.pk)
    page = client.get(url)
    prefix = inline_prefix(page, Card)
    data = change_form_data(page)
    drag(data, prefix, order)
    data.update(extra or {})
    return client.post(url, data)


# --- The deck page's card inline ---------------------------------------------------------------


def test_swapping_two_cards_takes_one_save(staff_client, deck):
    response = save_deck_page(staff_client, deck, card_ids("b", "a", "c", "d"))
    assert response.status_code == 302, response.context["errors"] if response.context else response
    assert ordered(deck.cards.all()) == ["b", "a", "c", "d"]
    assert positions(deck.cards.all()) == [0, 1, 2, 3]


def test_moving_the_last_card_to_the_top_renumbers_them_all(staff_client, deck):
    response = save_deck_page(staff_client, deck, card_ids("d", "a", "b", "c"))
    assert response.status_code == 302
    assert ordered(deck.cards.all()) == ["d", "a", "b", "c"]
    assert positions(deck.cards.all()) == [0, 1, 2, 3]


def test_a_new_card_dropped_mid_deck_lands_there(staff_client, deck):
    url = admin_url(Deck, "change", deck.pk)
    page = staff_client.get(url)
    prefix = inline_prefix(page, Card)
    data = change_form_data(page)
    new = int(data[f"{prefix}-TOTAL_FORMS"])
    data[f"{prefix}-TOTAL_FORMS"] = str(new + 1)
    data.update(new_card_row(prefix, new))
    # Dropped third: the rows after it move down one place.
    a, b, c, d = card_ids("a", "b", "c", "d")
    drag(data, prefix, [a, b, "new", c, d])
    data[f"{prefix}-{new}-position"] = "3"

    response = staff_client.post(url, data)

    assert response.status_code == 302, response.context["errors"] if response.context else response
    assert ordered(deck.cards.all()) == ["a", "b", "new", "c", "d"]
    assert positions(deck.cards.all()) == [0, 1, 2, 3, 4]


def test_a_new_card_not_dragged_goes_last(staff_client, deck):
    url = admin_url(Deck, "change", deck.pk)
    page = staff_client.get(url)
    prefix = inline_prefix(page, Card)
    data = change_form_data(page)
    new = int(data[f"{prefix}-TOTAL_FORMS"])
    data[f"{prefix}-TOTAL_FORMS"] = str(new + 1)
    data.update(new_card_row(prefix, new))

    assert staff_client.post(url, data).status_code == 302
    assert ordered(deck.cards.all()) == ["a", "b", "c", "d", "new"]
    assert positions(deck.cards.all()) == [0, 1, 2, 3, 4]


def test_an_inline_error_keeps_the_stored_order(staff_client, deck):
    a, b, c, d = card_ids("a", "b", "c", "d")
    page = staff_client.get(admin_url(Deck, "change", deck.pk))
    prefix = inline_prefix(page, Card)
    row_of_b = next(index for index in range(4) if change_form_data(page)[f"{prefix}-{index}-id"] == str(b))

    response = save_deck_page(staff_client, deck, [d, c, b, a], {f"{prefix}-{row_of_b}-term": ""})

    assert response.status_code == 200
    assert response.context["inline_admin_formsets"][0].formset.errors[row_of_b] == {
        "term": ["This field is required."]
    }
    assert ordered(deck.cards.all()) == ["a", "b", "c", "d"]


def test_the_reordered_course_exports_and_loads_back_unchanged(staff_client, course, deck):
    assert save_deck_page(staff_client, deck, card_ids("c", "d", "a", "b")).status_code == 302
    exported = course_doc_to_yaml(course_doc_build(course=course))
    report = content_sources_load(sources=[ContentSource("order.yaml", exported)], dry_run=True)
    assert not report.changed


# --- Sections, blocks, choices and regions -----------------------------------------------------


def _lesson() -> Lesson:
    return Lesson.objects.get(slug="ord-lesson")


def _section() -> LessonSection:
    return LessonSection.objects.get(slug="s1")


def _question() -> Question:
    return Question.objects.get(slug="ord-q")


def _scene() -> ExplorerScene:
    return ExplorerScene.objects.get(slug="ord-scene")


@pytest.mark.parametrize(
    ("parent_model", "parent_of", "child_model", "children_of"),
    [
        (Lesson, _lesson, LessonSection, lambda parent: parent.sections.all()),
        (LessonSection, _section, LessonBlock, lambda parent: parent.blocks.all()),
        (Question, _question, Choice, lambda parent: parent.choices.all()),
        (ExplorerScene, _scene, ExplorerRegion, lambda parent: parent.regions.all()),
    ],
    ids=["sections", "blocks", "choices", "regions"],
)
def test_reversing_an_inline_takes_one_save(staff_client, course, parent_model, parent_of, child_model, children_of):
    parent = parent_of()
    before = ordered(children_of(parent), "pk")
    assert len(before) == 3
    url = admin_url(parent_model, "change", parent.pk)
    page = staff_client.get(url)
    data = change_form_data(page)
    drag(data, inline_prefix(page, child_model), before[::-1])

    response = staff_client.post(url, data)

    assert response.status_code == 302, response.context["errors"] if response.context else response
    assert ordered(children_of(parent), "pk") == before[::-1]
    assert positions(children_of(parent)) == [0, 1, 2]


def test_a_concepts_links_reorder_among_the_course_wide_positions(staff_client, course):
    # A course file lists a course's links in one run: the concept's links trade places, the others stay.
    letters = Concept.objects.get(slug="letters")
    links = ConceptLink.objects.filter(source__course=course)
    before = ordered(links, "pk")
    first, other, second = before
    url = admin_url(Concept, "change", letters.pk)
    page = staff_client.get(url)
    data = change_form_data(page)
    drag(data, inline_prefix(page, ConceptLink), [second, first])

    response = staff_client.post(url, data)

    assert response.status_code == 302, response.context["errors"] if response.context else response
    assert ordered(links, "pk") == [second, other, first]
    assert positions(links) == [0, 1, 2]
    exported = course_doc_to_yaml(course_doc_build(course=course))
    assert not content_sources_load(sources=[ContentSource("order.yaml", exported)], dry_run=True).changed


@pytest.mark.parametrize(
    ("parent_model", "parent_of", "child_model"),
    [(Deck, lambda: Deck.objects.get(slug="ord-deck"), Card), (LessonSection, _section, LessonBlock)],
    ids=["cards", "blocks"],
)
def test_each_row_has_one_position_input(staff_client, course, parent_model, parent_of, child_model):
    # The script writes the first one; a second copy would be posted last and undo the drag.
    page = staff_client.get(admin_url(parent_model, "change", parent_of().pk))
    html = page.content.decode()
    assert html.count(f'name="{inline_prefix(page, child_model)}-0-position"') == 1


# --- The changelist's drag endpoint ------------------------------------------------------------


def post_drag(client: Client, model: type[models.Model], items: Any) -> Any:
    body = json.dumps({"updatedItems": items})
    return client.post(admin_url(model, "sortable_update"), body, content_type="application/json")


def test_the_list_is_draggable_only_when_filtered_to_one_parent(staff_client, deck):
    url = admin_url(Card, "changelist")
    assert 'class="drag handle"' not in staff_client.get(url).content.decode()
    filtered = staff_client.get(url, {"deck__id__exact": deck.pk})
    assert [card.slug for card in filtered.context["cl"].result_list] == ["a", "b", "c", "d"]
    assert filtered.content.decode().count('class="drag handle"') == 4


def test_a_list_with_its_own_tools_stays_draggable(staff_client, deck):
    # The deck list adds an import link to the tools; its template must still be the sortable one.
    page = staff_client.get(admin_url(Deck, "changelist"), {"lesson__id__exact": deck.lesson_id}).content.decode()
    assert "Import Anki or CSV" in page
    assert 'id="admin_sortable2_config"' in page
    assert page.count('class="drag handle"') == Deck.objects.filter(lesson=deck.lesson, archived=False).count()


def test_dragging_in_the_list_reorders_one_deck_densely(staff_client, deck):
    a, b, c, d = card_ids("a", "b", "c", "d")
    # As the script sends it: the dragged row and the rows it passed, with their new places.
    response = post_drag(staff_client, Card, [[str(d), 0], [str(a), 1], [str(b), 2], [str(c), 3]])
    assert response.status_code == 200
    assert response.json() == {"moved": 4}
    assert ordered(deck.cards.all()) == ["d", "a", "b", "c"]
    assert positions(deck.cards.all()) == [0, 1, 2, 3]


def test_dragging_in_a_list_without_archived_rows_leaves_them_in_place(staff_client, deck):
    a, b, c, d = card_ids("a", "b", "c", "d")
    Card.objects.filter(pk=c).update(archived=True)
    # The live list shows a, b, d at 0, 1, 3; d is dragged to the top.
    assert post_drag(staff_client, Card, [[d, 0], [a, 1], [b, 2]]).status_code == 200
    assert ordered(deck.cards.all()) == ["d", "a", "c", "b"]
    assert positions(deck.cards.all()) == [0, 1, 2, 3]


def test_dragging_rows_of_two_decks_is_refused_and_changes_nothing(staff_client, deck):
    (a,) = card_ids("a")
    other = Card.objects.get(slug="z")
    response = post_drag(staff_client, Card, [[other.pk, 0], [a, 1]])
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "positions_invalid"
    assert ordered(deck.cards.all()) == ["a", "b", "c", "d"]


@pytest.mark.parametrize("body", ["not json", '{"updatedItems": [["x"]]}', '{"other": []}', '{"updatedItems": 3}'])
def test_a_malformed_drag_is_a_400(staff_client, deck, body):
    response = staff_client.post(admin_url(Card, "sortable_update"), body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] in {"malformed_json", "positions_invalid"}
    assert ordered(deck.cards.all()) == ["a", "b", "c", "d"]


def test_the_drag_endpoint_takes_only_post(staff_client, deck):
    assert staff_client.get(admin_url(Card, "sortable_update")).status_code == 405


def test_the_drag_endpoint_needs_the_change_permission(client, learner, deck):
    client.force_login(learner)
    response = post_drag(client, Card, [[pk, index] for index, pk in enumerate(card_ids("b", "a"))])
    assert response.status_code == 302  # to the admin login page
    assert ordered(deck.cards.all()) == ["a", "b", "c", "d"]


# --- Rows saved on their own page --------------------------------------------------------------


def test_a_card_added_on_its_own_page_goes_last(staff_client, deck):
    url = admin_url(Card, "add")
    data = change_form_data(staff_client.get(url))
    data.update(
        deck=str(deck.pk),
        slug="e",
        term="epsilon",
        definition="Fifth letter",
        concepts=[str(Concept.objects.get(slug="letters").pk)],
        # Not a field of the page: a new card's place is after the last.
        position="0",
    )
    response = staff_client.post(url, data)
    assert response.status_code == 302, response.context["errors"] if response.context else response
    assert ordered(deck.cards.all()) == ["a", "b", "c", "d", "e"]
    assert positions(deck.cards.all()) == [0, 1, 2, 3, 4]


def test_a_card_moved_to_another_deck_goes_last_there_and_both_stay_dense(staff_client, deck):
    card = Card.objects.get(deck=deck, slug="b")
    other = Deck.objects.get(slug="ord-other")
    url = admin_url(Card, "change", card.pk)
    data = change_form_data(staff_client.get(url))
    data["deck"] = str(other.pk)

    response = staff_client.post(url, data)

    assert response.status_code == 302, response.context["errors"] if response.context else response
    assert ordered(other.cards.all()) == ["z", "b"]
    assert positions(other.cards.all()) == [0, 1]
    assert ordered(deck.cards.all()) == ["a", "c", "d"]
    assert positions(deck.cards.all()) == [0, 1, 2]


def test_deleting_a_choice_on_its_own_page_closes_the_gap(staff_client, course):
    question = Question.objects.get(slug="ord-q")
    choice = question.choices.get(key="b")
    response = staff_client.post(admin_url(Choice, "delete", choice.pk), {"post": "yes"})
    assert response.status_code == 302
    assert ordered(question.choices.all(), "key") == ["a", "c"]
    assert positions(question.choices.all()) == [0, 1]


def test_deleting_a_choice_in_the_inline_closes_the_gap(staff_client, course):
    question = Question.objects.get(slug="ord-q")
    url = admin_url(Question, "change", question.pk)
    page = staff_client.get(url)
    prefix = inline_prefix(page, Choice)
    data = change_form_data(page)
    (row,) = [index for index in range(3) if data[f"{prefix}-{index}-key"] == "b"]
    data[f"{prefix}-{row}-DELETE"] = "on"

    response = staff_client.post(url, data)

    assert response.status_code == 302, response.context["errors"] if response.context else response
    assert ordered(question.choices.all(), "key") == ["a", "c"]
    assert positions(question.choices.all()) == [0, 1]


# --- The renumbering services ------------------------------------------------------------------


def test_renumbering_puts_unnamed_rows_after_the_named_ones(deck):
    c, a = card_ids("c", "a")
    assert positions_renumber(model=Card, parent_field="deck", parent_id=deck.pk, ordered_ids=[c, a]) == 3
    assert ordered(deck.cards.all()) == ["c", "a", "b", "d"]


def test_renumbering_closes_gaps(deck):
    # From the last row up, so no row lands on a place another still holds.
    for position, slug in reversed(list(zip([3, 7, 8, 20], "abcd", strict=True))):
        Card.objects.filter(deck=deck, slug=slug).update(position=position)
    positions_renumber(model=Card, parent_field="deck", parent_id=deck.pk, ordered_ids=[])
    assert positions(deck.cards.all()) == [0, 1, 2, 3]
    assert ordered(deck.cards.all()) == ["a", "b", "c", "d"]


def test_renumbering_refuses_a_row_of_another_parent(deck):
    other = Card.objects.get(slug="z")
    with pytest.raises(PositionsInvalid):
        positions_renumber(model=Card, parent_field="deck", parent_id=deck.pk, ordered_ids=[other.pk])


def test_permuting_an_unknown_row_is_refused(deck):
    with pytest.raises(PositionsInvalid):
        positions_permute(model=Card, parent_field="deck", ordered_ids=[10**9])


# --- Archived rows: marked, and hidden from the default list -----------------------------------


def test_the_default_list_hides_archived_rows_and_marks_none(staff_client, deck):
    Card.objects.filter(slug="c").update(archived=True)
    response = staff_client.get(admin_url(Card, "changelist"))
    shown = [card.slug for card in response.context["cl"].result_list]
    assert sorted(shown) == ["a", "b", "d", "z"]
    assert "archived-marker" not in response.content.decode()


@pytest.mark.parametrize(("status", "expected"), [("archived", ["c"]), ("all", ["a", "b", "c", "d", "z"])])
def test_the_status_filter_shows_archived_rows_marked(staff_client, deck, status, expected):
    Card.objects.filter(slug="c").update(archived=True)
    response = staff_client.get(admin_url(Card, "changelist"), {"status": status})
    assert sorted(card.slug for card in response.context["cl"].result_list) == expected
    html = response.content.decode()
    assert html.count('<span class="archived-marker">Archived</span>') == 1
    (row,) = [row for row in html.split("<tr") if "archived-marker" in row]
    assert f'value="{Card.objects.get(slug="c").pk}"' in row


def test_the_status_filter_offers_live_archived_and_all(staff_client, deck):
    response = staff_client.get(admin_url(Card, "changelist"))
    (status_filter,) = [
        spec for spec in response.context["cl"].filter_specs if getattr(spec, "parameter_name", "") == "status"
    ]
    choices = list(status_filter.choices(response.context["cl"]))
    assert [(choice["display"], choice["selected"]) for choice in choices] == [
        ("Live", True),
        ("Archived", False),
        ("All", False),
    ]


def test_archived_rows_can_be_restored_from_the_archived_list(staff_client, deck):
    Card.objects.filter(slug="c").update(archived=True)
    card = Card.objects.get(slug="c")
    url = admin_url(Card, "changelist") + "?status=archived"
    response = staff_client.post(url, {"action": "restore_selected", "_selected_action": [card.pk]})
    assert response.status_code == 302
    card.refresh_from_db()
    assert card.archived is False


def test_the_inline_marks_archived_rows(staff_client, deck):
    Card.objects.filter(slug="c").update(archived=True)
    html = staff_client.get(admin_url(Deck, "change", deck.pk)).content.decode()
    assert html.count('<span class="archived-marker">Archived</span>') == 1
