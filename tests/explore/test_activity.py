"""The learner's activity feed: sources merged newest first, kinds, privacy and cursor pagination."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.content.models import Card, Deck, ExplorerRegion, PipelineExercise
from apps.exercises.models import Submission, SubmissionStatus, Verdict
from apps.explore import activity
from apps.explore.models import RegionVisit
from apps.srs.models import DeckPass
from tests.support.api import make_learner
from tests.support.explore import REGION, SCENE, visit
from tests.support.games import answers
from tests.support.reviews import post_review, review_body

pytestmark = pytest.mark.django_db

DECK = "tf-data-pipelines"
ALL_KINDS = {"review", "deck_pass", "region_visit", "submission"}


def feed(client, **params) -> dict:
    response = client.get("/api/v1/activity/", params)
    assert response.status_code == 200, response.content
    return response.json()


def every_page(client, **params) -> tuple[list[dict], int]:
    """All items, following next links; and how many pages that took."""
    items: list[dict] = []
    body = feed(client, **params)
    pages = 1
    while True:
        items += body["results"]
        if body["next"] is None:
            return items, pages
        response = client.get(body["next"])
        assert response.status_code == 200, response.content
        body = response.json()
        pages += 1


def make_pass(learner, at, known=3, total=4) -> DeckPass:
    return DeckPass.objects.create(
        learner=learner,
        deck=Deck.objects.get(slug=DECK),
        known=known,
        total=total,
        started_at=at - timedelta(minutes=5),
        finished_at=at,
    )


def make_visit(learner, at, region=REGION) -> RegionVisit:
    return RegionVisit.objects.create(
        learner=learner, region=ExplorerRegion.objects.get(scene__slug=SCENE, slug=region), visited_at=at
    )


def make_submission(learner, **fields) -> Submission:
    return Submission.objects.create(
        learner=learner, exercise=PipelineExercise.objects.order_by("pk")[0], code="def f(): ...", **fields
    )


def every_kind(learner, client) -> None:
    cards = list(Card.objects.filter(deck__slug=DECK, archived=False).order_by("position")[:3])
    for card in cards:
        assert post_review(client, review_body(card, rating=1 if card == cards[0] else 3)).status_code == 201
    make_pass(learner, timezone.now())
    assert visit(client).status_code == 201
    make_submission(learner, status=SubmissionStatus.DONE, verdict=Verdict.ACCEPTED, score=87.5)


def test_a_visit_appears_in_the_activity(learner_client, shipped_course):
    recorded = visit(learner_client).json()
    body = feed(learner_client)
    assert body["next"] is None
    assert body["next_before"] is None
    region = ExplorerRegion.objects.select_related("scene").get(scene__slug=SCENE, slug=REGION)
    assert body["results"] == [
        {
            "id": f"region_visit:{recorded['id']}",
            "kind": "region_visit",
            "at": recorded["visited_at"],
            "summary": f"Explored {region.title} in {region.scene.title}",
            "detail": {
                "visit_id": recorded["id"],
                "scene": SCENE,
                "scene_title": region.scene.title,
                "region": REGION,
                "region_title": region.title,
            },
        }
    ]


def test_every_kind_is_shown_newest_first_with_its_detail(learner, learner_client, shipped_course):
    every_kind(learner, learner_client)
    items = feed(learner_client)["results"]
    assert [item["kind"] for item in items] == ["submission", "region_visit", "deck_pass", "review"]
    assert [item["at"] for item in items] == sorted((item["at"] for item in items), reverse=True)
    by_kind = {item["kind"]: item for item in items}
    review = by_kind["review"]
    # The three reviews of one deck on one day are one item.
    assert review["detail"]["reviews"] == 3
    assert review["detail"]["again"] == 1
    assert review["detail"]["deck"] == DECK
    assert review["summary"].startswith("Reviewed 3 cards in ")
    assert by_kind["deck_pass"]["detail"]["known"] == 3
    assert by_kind["deck_pass"]["summary"].endswith(": 3/4 known")
    assert by_kind["submission"]["detail"]["verdict"] == "accepted"
    assert by_kind["submission"]["summary"].endswith(": accepted, score 87.5")


def test_kind_filter(learner, learner_client, shipped_course):
    every_kind(learner, learner_client)
    assert {item["kind"] for item in feed(learner_client, kind="region_visit")["results"]} == {"region_visit"}
    both = feed(learner_client, kind="review,deck_pass")["results"]
    assert sorted(item["kind"] for item in both) == ["deck_pass", "review"]
    assert {item["kind"] for item in feed(learner_client)["results"]} == ALL_KINDS
    response = learner_client.get("/api/v1/activity/", {"kind": "quiz_party"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert "kind" in response.json()["error"]["fields"]


def test_another_learners_items_never_appear(learner, learner_client, shipped_course):
    other, other_client = make_learner("bob")
    every_kind(other, other_client)
    assert feed(learner_client)["results"] == []
    for kind in ALL_KINDS:
        assert feed(learner_client, kind=kind)["results"] == []
    make_pass(learner, timezone.now())
    assert [item["kind"] for item in feed(learner_client)["results"]] == ["deck_pass"]
    assert len(feed(other_client)["results"]) == 4


def test_undone_reviews_are_left_out(learner_client, shipped_course):
    card = Card.objects.filter(deck__slug=DECK).order_by("position")[0]
    review = post_review(learner_client, review_body(card)).json()
    assert feed(learner_client)["results"][0]["detail"]["reviews"] == 1
    assert learner_client.post(f"/api/v1/reviews/{review['id']}/undo/").status_code in (200, 201)
    assert feed(learner_client)["results"] == []


def test_pagination_returns_every_item_exactly_once(learner, learner_client, shipped_course):
    now = timezone.now().replace(microsecond=0)
    expected: set[str] = set()
    for minutes in range(0, 30, 3):
        expected.add(f"deck_pass:{make_pass(learner, now - timedelta(minutes=minutes)).pk}")
    # Times shared across kinds and within a kind, including a group larger than a page.
    for _ in range(5):
        expected.add(f"region_visit:{make_visit(learner, now - timedelta(minutes=6)).pk}")
    for minutes in (1, 6, 6, 40):
        submission = make_submission(learner)
        Submission.objects.filter(pk=submission.pk).update(created_at=now - timedelta(minutes=minutes))
        expected.add(f"submission:{submission.pk}")
    assert len(expected) == 19

    for page_size in (1, 2, 3, 7, 50):
        items, pages = every_page(learner_client, page_size=page_size)
        ids = [item["id"] for item in items]
        assert len(ids) == len(set(ids)), page_size
        assert set(ids) == expected, page_size
        assert [item["at"] for item in items] == sorted((item["at"] for item in items), reverse=True)
        if page_size < 19:
            assert pages > 1

    filtered, _ = every_page(learner_client, page_size=2, kind="submission")
    assert {item["id"] for item in filtered} == {i for i in expected if i.startswith("submission:")}


def test_a_page_is_cut_before_a_shared_time_or_holds_the_whole_group(learner, learner_client, shipped_course):
    now = timezone.now()
    newest = make_pass(learner, now)
    group = {make_visit(learner, now - timedelta(minutes=1)).pk for _ in range(4)}
    first = feed(learner_client, page_size=3)
    # The page would end inside the group of four: it stops before it.
    assert [item["id"] for item in first["results"]] == [f"deck_pass:{newest.pk}"]
    second = learner_client.get(first["next"]).json()
    # The group alone is larger than a page: the page holds all of it.
    assert {item["detail"]["visit_id"] for item in second["results"]} == group
    assert second["next"] is None or learner_client.get(second["next"]).json()["results"] == []


def test_before_cursor_and_page_size_are_checked(learner, learner_client, shipped_course):
    now = timezone.now()
    old = make_pass(learner, now - timedelta(hours=2))
    make_pass(learner, now)
    body = feed(learner_client, before=(now - timedelta(hours=1)).isoformat())
    assert [item["detail"]["pass_id"] for item in body["results"]] == [old.pk]
    naive = learner_client.get("/api/v1/activity/", {"before": "2026-01-01T10:00:00"})
    assert naive.status_code == 400
    assert "before" in naive.json()["error"]["fields"]
    too_big = learner_client.get("/api/v1/activity/", {"page_size": 201})
    assert too_big.status_code == 400
    assert "page_size" in too_big.json()["error"]["fields"]


def test_a_source_is_one_function_and_one_registry_line(learner, learner_client, shipped_course, monkeypatch):
    def greetings(*, learner, before, limit):
        at = timezone.now() - timedelta(days=1)
        if before is not None and at >= before:
            return []
        return [activity.ActivityItem(kind="greeting", key="1", at=at, summary="Hello", detail={})][:limit]

    monkeypatch.setitem(activity.ACTIVITY_SOURCES, "greeting", greetings)
    monkeypatch.setattr(activity, "ACTIVITY_KINDS", (*activity.ACTIVITY_KINDS, "greeting"))
    make_pass(learner, timezone.now())
    page = activity.activity_page(learner=learner, limit=10)
    assert [item.kind for item in page.items] == ["deck_pass", "greeting"]


def test_needs_a_signed_in_learner(api_client):
    response = api_client.get("/api/v1/activity/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_finished_match_boards_and_quizzes_are_in_the_activity_and_their_reviews_are_not(
    learner, learner_client, shipped_course
):
    board = learner_client.post(f"/api/v1/decks/{DECK}/match/", {"pairs": 2}, format="json").json()
    for pair in answers(board["id"]):
        response = learner_client.post(
            f"/api/v1/match/{board['id']}/attempts/",
            {"term_id": pair.term_id, "definition_id": pair.definition_id},
            format="json",
        )
        assert response.status_code == 201, response.content
    attempt = learner_client.post("/api/v1/quizzes/tf-data-page-check/attempts/", {}, format="json").json()
    question = attempt["questions"][0]
    response = learner_client.post(
        f"/api/v1/quiz-attempts/{attempt['id']}/answers/",
        {
            "question": question["slug"],
            **({"text": "nothing"} if question["kind"] == "short_text" else {"choice": question["choices"][0]["key"]}),
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    assert learner_client.post(f"/api/v1/quiz-attempts/{attempt['id']}/finish/").status_code == 200

    items = feed(learner_client)["results"]
    # The match and the quiz moved card states, but show once, as themselves, not as deck reviews.
    assert [item["kind"] for item in items] == ["quiz", "match"]
    quiz, match = items
    assert match["detail"]["pairs"] == 2 and match["detail"]["personal_best"] is True
    assert match["summary"].startswith("Matched 2 pairs of ")
    assert quiz["detail"]["quiz"] == "tf-data-page-check" and quiz["detail"]["answered"] == 1
    assert quiz["summary"].startswith("Finished the quiz ")
