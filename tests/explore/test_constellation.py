"""The concept constellation: its shape, a layout stored once per content change, mastery and query count."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.content.models import Card, Concept, ConceptLink, Course, Deck, Lesson, LinkKind
from apps.content.services import content_archived_set
from apps.explore import services
from apps.explore.layout import BOX_HALF, layout_compute
from apps.explore.models import ConstellationLayout
from apps.srs.core.scheduling import SchedulerConfig, retrievability
from apps.srs.models import CardMemory
from apps.srs.reviews.memory import memory_state_of
from apps.srs.reviews.recall import MATURE_STABILITY_DAYS
from tests.support.api import make_learner
from tests.support.explore import COURSE, constellation, constellation_of, coordinates
from tests.support.paths import DECKS_DIR
from tests.support.reviews import post_review, review_body, run_together

pytestmark = pytest.mark.django_db


@pytest.fixture
def compute_calls(monkeypatch) -> list[int]:
    """Counts layout computations; each entry is the number of concepts laid out."""
    calls: list[int] = []

    def counting(**kwargs):
        calls.append(len(list(kwargs["slugs"])))
        return layout_compute(**kwargs)

    monkeypatch.setattr(services, "layout_compute", counting)
    return calls


def test_every_visible_concept_is_a_node_with_links_cards_and_coordinates(learner_client, shipped_course):
    body = constellation(learner_client)
    concepts = Concept.objects.filter(course__slug=COURSE, archived=False)
    assert body["course"] == COURSE
    assert [node["slug"] for node in body["nodes"]] == sorted(concepts.values_list("slug", flat=True))
    assert len(body["edges"]) == ConceptLink.objects.filter(source__course__slug=COURSE).count()
    node = next(node for node in body["nodes"] if node["slug"] == "batching")
    assert set(node) == {
        "slug",
        "name",
        "definition",
        "x",
        "y",
        "z",
        "links",
        "cards",
        "mastery",
        "cards_studied",
        "cards_total",
    }
    assert {
        "direction": "outgoing",
        "kind": "part_of",
        "label": "is part of",
        "concept": "input-pipeline",
        "concept_name": "Input pipeline",
    } in node["links"]
    hub = next(node for node in body["nodes"] if node["slug"] == "input-pipeline")
    assert {
        "direction": "incoming",
        "kind": "part_of",
        "label": "includes",
        "concept": "batching",
        "concept_name": node["name"],
    } in hub["links"]
    assert {"source": "batching", "target": "input-pipeline", "kind": "part_of", "label": "is part of"} in body["edges"]
    card_ids = set(Concept.objects.get(course__slug=COURSE, slug="batching").cards.values_list("pk", flat=True))
    assert {card["id"] for card in node["cards"]} == card_ids
    first = Card.objects.select_related("deck").get(pk=node["cards"][0]["id"])
    assert node["cards"][0] == {"id": first.pk, "deck": first.deck.slug, "slug": first.slug, "term": first.term}
    assert node["cards_total"] == len(card_ids)
    assert node["mastery"] == 0.0
    assert node["cards_studied"] == 0
    for x, y, z in coordinates(body).values():
        assert max(abs(x), abs(y), abs(z)) <= BOX_HALF
        assert all(round(value, 4) == value for value in (x, y, z))
    # Normalised: the widest axis reaches the box, and no two concepts share a point.
    assert max(max(abs(v) for v in xyz) for xyz in coordinates(body).values()) == BOX_HALF
    assert len(set(coordinates(body).values())) == len(body["nodes"])


def test_archived_concepts_cards_and_their_links_are_left_out(learner_client, shipped_course):
    content_archived_set(items=Concept.objects.filter(slug="batching"), archived=True)
    prefetch = Concept.objects.get(slug="prefetching")
    archived_card = prefetch.cards.order_by("pk")[0]
    content_archived_set(items=Card.objects.filter(pk=archived_card.pk), archived=True)
    body = constellation(learner_client)
    assert "batching" not in {node["slug"] for node in body["nodes"]}
    assert all("batching" not in (edge["source"], edge["target"]) for edge in body["edges"])
    assert all(link["concept"] != "batching" for node in body["nodes"] for link in node["links"])
    node = next(node for node in body["nodes"] if node["slug"] == "prefetching")
    assert archived_card.pk not in {card["id"] for card in node["cards"]}


def test_same_content_gives_the_same_coordinates_after_dropping_the_stored_layout(learner_client, shipped_course):
    first = constellation(learner_client)
    ConstellationLayout.objects.all().delete()
    second = constellation(learner_client)
    assert second["layout"]["computed_at"] != first["layout"]["computed_at"]
    assert second["layout"]["digest"] == first["layout"]["digest"]
    assert coordinates(second) == coordinates(first)


@pytest.mark.django_db(transaction=True)
def test_same_course_file_gives_the_same_coordinates_in_a_fresh_database():
    def load_and_read() -> tuple[dict, list[int]]:
        call_command("load_decks", str(DECKS_DIR), stdout=io.StringIO())
        _, client = make_learner("lin")
        return coordinates(constellation(client)), list(Card.objects.order_by("pk").values_list("pk", flat=True))

    first, first_cards = load_and_read()
    call_command("flush", interactive=False, verbosity=0)
    assert not Course.objects.exists()
    assert not ConstellationLayout.objects.exists()
    # A card of another course first, so the reloaded rows get other ids whatever the database hands out
    # after the flush.
    other = Course.objects.create(slug="other-course", title="Other")
    lesson = Lesson.objects.create(course=other, slug="other-lesson", title="Other", position=0)
    deck = Deck.objects.create(lesson=lesson, slug="other-deck", title="Other", position=0)
    Card.objects.create(deck=deck, slug="placeholder", term="t", definition="d", position=0)
    second, second_cards = load_and_read()
    assert second == first
    assert second_cards != first_cards  # new rows, new ids: only slugs and links matter


def test_layout_is_not_recomputed_per_request(learner_client, shipped_course, compute_calls):
    first = constellation(learner_client)
    for _ in range(3):
        again = constellation(learner_client)
    assert len(compute_calls) == 1
    assert ConstellationLayout.objects.count() == 1
    assert again["layout"] == first["layout"]
    # Edits that do not move the graph (a name, a definition) keep the layout too.
    Concept.objects.filter(slug="batching").update(name="Batching!", definition="Grouping elements.")
    assert constellation(learner_client)["layout"] == first["layout"]
    # Reloading the unchanged course file, which rewrites the links, changes nothing either.
    call_command("load_decks", str(DECKS_DIR), stdout=io.StringIO())
    assert constellation(learner_client)["layout"] == first["layout"]
    assert len(compute_calls) == 1


def test_layout_is_recomputed_after_a_link_or_concept_changes(learner_client, shipped_course, compute_calls):
    first = constellation(learner_client)
    source = Concept.objects.get(course__slug=COURSE, slug="batching")
    target = Concept.objects.get(course__slug=COURSE, slug="data-leakage")
    link = ConceptLink.objects.create(source=source, target=target, kind=LinkKind.RELATED, position=999)
    linked = constellation(learner_client)
    assert len(compute_calls) == 2
    assert linked["layout"]["digest"] != first["layout"]["digest"]
    assert linked["layout"]["computed_at"] > first["layout"]["computed_at"]
    assert coordinates(linked) != coordinates(first)
    assert ConstellationLayout.objects.count() == 1

    link.delete()
    assert coordinates(constellation(learner_client)) == coordinates(first)
    assert len(compute_calls) == 3

    course = Course.objects.get(slug=COURSE)
    Concept.objects.create(course=course, slug="zz-new-idea", name="New idea", definition="New.", position=999)
    added = constellation(learner_client)
    assert len(compute_calls) == 4
    assert compute_calls[-1] == compute_calls[0] + 1
    assert "zz-new-idea" in coordinates(added)

    content_archived_set(items=Concept.objects.filter(slug="zz-new-idea"), archived=True)
    assert coordinates(constellation(learner_client)) == coordinates(first)
    assert len(compute_calls) == 5


def test_mastery_moves_after_a_review_and_only_for_that_learner(learner_client, shipped_course):
    card = Concept.objects.get(course__slug=COURSE, slug="batching").cards.order_by("pk")[0]
    holding = set(card.concepts.values_list("slug", flat=True))
    _, other_client = make_learner("bob")
    assert post_review(other_client, review_body(card)).status_code == 201
    before = {node["slug"]: node for node in constellation(learner_client)["nodes"]}
    assert all(node["mastery"] == 0.0 and node["cards_studied"] == 0 for node in before.values())

    assert post_review(learner_client, review_body(card, rating=3)).status_code == 201
    after = {node["slug"]: node for node in constellation(learner_client)["nodes"]}
    for slug, node in after.items():
        if slug in holding:
            assert node["cards_studied"] == 1
            # Just reviewed: recalled now, but seen once it is far from lasting; the concept's other cards count 0.
            assert 0 < node["mastery"] < 0.2 / node["cards_total"]
        else:
            assert node["mastery"] == 0.0
            assert node["cards_studied"] == 0


def test_mastery_is_recall_weighed_by_stability_and_fades_with_time(learner, learner_client, shipped_course):
    concept = Concept.objects.get(course__slug=COURSE, slug="batching")
    card = concept.cards.order_by("pk")[0]
    assert post_review(learner_client, review_body(card)).status_code == 201
    state = memory_state_of(CardMemory.objects.get(learner=learner, card=card))
    assert state is not None
    total = concept.cards.count()

    def mastery_at(moment):
        found = constellation_of(learner=learner, now=moment)
        return next(node for node in found.nodes if node.concept.slug == "batching").mastery

    later = timezone.now() + timedelta(days=60)
    weight = min(1.0, state.stability / MATURE_STABILITY_DAYS)
    expected = retrievability(state, now=later, config=SchedulerConfig()) * weight / total
    assert mastery_at(later) == pytest.approx(expected, rel=1e-12)
    assert mastery_at(later) < mastery_at(timezone.now())


def test_unknown_or_archived_course_is_a_404_in_the_error_shape(learner_client, shipped_course):
    response = learner_client.get("/api/v1/courses/no-such-course/constellation/")
    assert response.status_code == 404
    assert set(response.json()) == {"error"}
    assert response.json()["error"]["code"] == "not_found"
    assert set(response.json()["error"]) == {"code", "message", "fields"}
    content_archived_set(items=Course.objects.filter(slug=COURSE), archived=True)
    assert learner_client.get(f"/api/v1/courses/{COURSE}/constellation/").status_code == 404


def test_needs_a_signed_in_learner(api_client, shipped_course):
    response = api_client.get(f"/api/v1/courses/{COURSE}/constellation/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def _own_queries(client) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(f"/api/v1/courses/{COURSE}/constellation/").status_code == 200
    return len([q for q in captured.captured_queries if "accounts_devicetoken" not in q["sql"]])


def test_query_count_is_bounded_and_does_not_grow_with_content(
    learner_client, shipped_course, django_assert_max_num_queries
):
    for card in Card.objects.filter(deck__slug="tf-data-pipelines")[:5]:
        assert post_review(learner_client, review_body(card)).status_code == 201
    constellation(learner_client)  # stores the layout
    # The course memory models in use for the learner are one of them (each card's recall follows its model).
    with django_assert_max_num_queries(8):
        constellation(learner_client)
    small = _own_queries(learner_client)

    course = Course.objects.get(slug=COURSE)
    deck = Deck.objects.get(slug="tf-data-pipelines")
    for index in range(10):
        concept = Concept.objects.create(
            course=course, slug=f"extra-{index}", name=f"Extra {index}", definition="More.", position=1000 + index
        )
        card = Card.objects.create(deck=deck, slug=f"extra-{index}", term="t", definition="d", position=1000 + index)
        concept.cards.add(card)
        ConceptLink.objects.create(
            source=concept, target=Concept.objects.get(slug="batching"), kind=LinkKind.RELATED, position=1000 + index
        )
        assert post_review(learner_client, review_body(card)).status_code == 201
    constellation(learner_client)  # recomputes the layout for the new content
    assert _own_queries(learner_client) == small


@pytest.mark.django_db(transaction=True)
def test_concurrent_first_requests_compute_and_store_one_layout(compute_calls):
    call_command("load_decks", str(DECKS_DIR), stdout=io.StringIO())
    learner, _ = make_learner("kim")
    results = run_together(4, lambda _: constellation_of(learner=learner, now=timezone.now()).layout)
    assert ConstellationLayout.objects.count() == 1
    assert len(compute_calls) == 1
    stored = ConstellationLayout.objects.get()
    assert {layout.pk for layout in results} == {stored.pk}
    assert all(layout.positions == stored.positions for layout in results)
    assert stored.computed_at > timezone.now() - timedelta(minutes=5)


def test_layout_does_not_depend_on_the_order_content_is_read_in():
    slugs = ["a", "b", "c", "d", "e"]
    links = [("a", "b", "part_of"), ("b", "c", "related"), ("c", "d", "enables"), ("a", "e", "contrasts")]
    forward = layout_compute(slugs=slugs, links=links)
    assert layout_compute(slugs=list(reversed(slugs)), links=list(reversed(links))) == forward
    assert layout_compute(slugs=slugs, links=links[:-1]) != forward
    assert layout_compute(slugs=[], links=[]) == {}
    assert layout_compute(slugs=["solo"], links=[]) == {"solo": (0.0, 0.0, 0.0)}
