"""Explorer scenes: the model URL, regions with their cards, and the learner's recorded visits."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.content.models import Card, ExplorerRegion, ExplorerScene
from apps.content.services import content_archived_set
from apps.explore.models import RegionVisit
from apps.explore.services import region_visit_record
from tests.support.api import assert_error, make_learner
from tests.support.explore import OTHER_REGION, REGION, SCENE, visit
from tests.support.reviews import run_together

pytestmark = pytest.mark.django_db


def scene(client) -> dict:
    response = client.get(f"/api/v1/explorer/{SCENE}/")
    assert response.status_code == 200, response.content
    return response.json()


def region_of(body: dict, slug: str) -> dict:
    return next(region for region in body["regions"] if region["slug"] == slug)


def test_scene_gives_model_url_instructions_and_regions_with_cards(learner_client, shipped_course, settings):
    settings.EXPLORER_ASSET_BASE_URL = "https://cdn.example.org/explorer/"
    body = scene(learner_client)
    assert body["model_url"] == "https://cdn.example.org/explorer/models/input-pipeline.glb"
    assert body["instructions"] == "Drag to rotate · scroll to zoom · click regions to explore"
    stored = ExplorerRegion.objects.get(scene__slug=SCENE, slug=REGION)
    region = region_of(body, REGION)
    assert region["id"] == stored.pk
    assert region["title"] == stored.title
    assert region["description"] == stored.description
    assert region["visited"] is False
    assert region["last_visited_at"] is None
    cards = list(stored.cards.select_related("deck").order_by("deck_id", "position"))
    assert region["cards"] == [
        {"id": card.pk, "deck": card.deck.slug, "slug": card.slug, "term": card.term} for card in cards
    ]


def test_archived_regions_and_cards_are_hidden(learner_client, shipped_course):
    content_archived_set(items=ExplorerRegion.objects.filter(slug=OTHER_REGION), archived=True)
    card = ExplorerRegion.objects.get(slug=REGION).cards.order_by("pk")[0]
    content_archived_set(items=Card.objects.filter(pk=card.pk), archived=True)
    body = scene(learner_client)
    assert OTHER_REGION not in {region["slug"] for region in body["regions"]}
    assert card.pk not in {item["id"] for item in region_of(body, REGION)["cards"]}


def test_a_visit_is_recorded_with_the_server_time_and_shown_on_the_scene(learner, learner_client, shipped_course):
    before = timezone.now()
    response = visit(learner_client, client_visit_id=str(uuid.uuid4()))
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == {"id", "scene", "region", "visited_at", "client_visit_id", "duplicate"}
    assert body["duplicate"] is False
    stored = RegionVisit.objects.get(pk=body["id"])
    assert stored.learner == learner
    assert (body["scene"], body["region"]) == (SCENE, REGION)
    assert before <= stored.visited_at <= timezone.now()

    shown = scene(learner_client)
    assert region_of(shown, REGION)["visited"] is True
    assert region_of(shown, REGION)["last_visited_at"] == body["visited_at"]
    assert region_of(shown, OTHER_REGION)["visited"] is False

    later = visit(learner_client).json()
    assert later["visited_at"] > body["visited_at"]
    assert region_of(scene(learner_client), REGION)["last_visited_at"] == later["visited_at"]
    assert RegionVisit.objects.filter(learner=learner).count() == 2


def test_a_retry_with_the_same_id_is_a_200_with_the_first_visit(learner, learner_client, shipped_course):
    client_visit_id = str(uuid.uuid4())
    first = visit(learner_client, client_visit_id=client_visit_id)
    retry = visit(learner_client, client_visit_id=client_visit_id)
    assert (first.status_code, retry.status_code) == (201, 200)
    assert retry.json() == {**first.json(), "duplicate": True}
    assert RegionVisit.objects.filter(learner=learner).count() == 1
    # Another learner's id space is their own.
    _, other = make_learner("bob")
    assert visit(other, client_visit_id=client_visit_id).status_code == 201


def test_an_id_reused_for_another_region_is_refused_and_records_nothing(learner, learner_client, shipped_course):
    client_visit_id = str(uuid.uuid4())
    first = visit(learner_client, client_visit_id=client_visit_id).json()
    before = list(RegionVisit.objects.filter(learner=learner).values())

    response = visit(learner_client, OTHER_REGION, client_visit_id=client_visit_id)

    assert_error(response, 409, "idempotency_key_reused")
    error = response.json()["error"]
    assert error["fields"] == {"region": ["Differs from the visit first sent with this client_visit_id."]}
    assert f"{SCENE}/{REGION}" in error["message"] and client_visit_id in error["message"]
    assert list(RegionVisit.objects.filter(learner=learner).values()) == before
    # The first visit still answers its retries.
    assert visit(learner_client, client_visit_id=client_visit_id).json() == {**first, "duplicate": True}


def test_a_retry_still_succeeds_after_the_region_is_archived(learner_client, shipped_course):
    client_visit_id = str(uuid.uuid4())
    first = visit(learner_client, client_visit_id=client_visit_id).json()
    content_archived_set(items=ExplorerRegion.objects.filter(slug=REGION), archived=True)
    retry = visit(learner_client, client_visit_id=client_visit_id)
    assert retry.status_code == 200
    assert retry.json()["id"] == first["id"]


@pytest.mark.parametrize(
    ("scene_slug", "region_slug"),
    [("no-such-scene", REGION), (SCENE, "no-such-region"), (SCENE, "storage-shards-x")],
)
def test_unknown_scene_or_region_is_a_404(learner_client, shipped_course, scene_slug, region_slug):
    assert_error(visit(learner_client, region_slug, scene=scene_slug), 404, "not_found")
    assert not RegionVisit.objects.exists()


def test_archived_scene_or_region_is_a_404(learner_client, shipped_course):
    content_archived_set(items=ExplorerRegion.objects.filter(slug=REGION), archived=True)
    assert_error(visit(learner_client), 404, "not_found")
    content_archived_set(items=ExplorerScene.objects.filter(slug=SCENE), archived=True)
    assert_error(visit(learner_client, OTHER_REGION), 404, "not_found")
    assert_error(learner_client.get(f"/api/v1/explorer/{SCENE}/"), 404, "not_found")
    assert not RegionVisit.objects.exists()


def test_a_bad_visit_id_is_a_400_and_visits_cannot_be_deleted(learner_client, shipped_course):
    response = visit(learner_client, client_visit_id="not-a-uuid")
    assert_error(response, 400, "invalid")
    assert "client_visit_id" in response.json()["error"]["fields"]
    assert visit(learner_client).status_code == 201
    deleted = learner_client.delete(f"/api/v1/explorer/{SCENE}/regions/{REGION}/visits/")
    assert_error(deleted, 405, "method_not_allowed")
    assert RegionVisit.objects.count() == 1


def test_another_learners_visits_are_not_shown(learner_client, shipped_course):
    _, other = make_learner("bob")
    assert visit(other).status_code == 201
    assert all(region["visited"] is False for region in scene(learner_client)["regions"])


def test_scene_queries_do_not_grow_with_visits(learner_client, shipped_course):
    for slug in (REGION, OTHER_REGION, REGION):
        assert visit(learner_client, slug).status_code == 201
    scene(learner_client)
    with CaptureQueriesContext(connection) as captured:
        scene(learner_client)
    own = [q for q in captured.captured_queries if "accounts_devicetoken" not in q["sql"]]
    assert len(own) == 3, "\n".join(q["sql"] for q in own)


@pytest.mark.django_db(transaction=True)
def test_the_same_visit_sent_at_once_is_recorded_once(shipped_course):
    learner, _ = make_learner("kim")
    client_visit_id = uuid.uuid4()
    results = run_together(
        4,
        lambda _: region_visit_record(
            learner=learner,
            scene_slug=SCENE,
            region_slug=REGION,
            client_visit_id=client_visit_id,
            now=timezone.now(),
        ),
    )
    assert RegionVisit.objects.filter(learner=learner).count() == 1
    assert sorted(created for _, created in results) == [False, False, False, True]
    assert len({visit.pk for visit, _ in results}) == 1
