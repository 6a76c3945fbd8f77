"""The read API for content: shapes, pagination, query counts, and no answer key anywhere."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.content.models import AcceptedAnswer, Card, Choice, Concept, Deck, PipelineExercise, Question

pytestmark = pytest.mark.django_db

COURSE = "tensorflow-ai-phd"
LESSON = "data-pipelines-tf-data"
DECK = "tf-data-pipelines"


def test_content_needs_a_signed_in_user(api_client, shipped_course):
    response = api_client.get("/api/v1/courses/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_course_list_and_detail(learner_client, shipped_course):
    listing = learner_client.get("/api/v1/courses/").json()
    assert listing["count"] == 1
    assert listing["results"][0]["slug"] == COURSE
    detail = learner_client.get(f"/api/v1/courses/{COURSE}/").json()
    assert [lesson["slug"] for lesson in detail["lessons"]] == [LESSON]
    assert detail["scenes"][0]["slug"] == "input-pipeline-explorer"


def test_lesson_has_ordered_sections_of_typed_blocks(learner_client, shipped_course):
    lesson = learner_client.get(f"/api/v1/lessons/{LESSON}/").json()
    kinds = {block["kind"] for section in lesson["sections"] for block in section["blocks"]}
    assert {"prose", "terms", "comparison", "steps", "callout", "question", "code"} <= kinds
    terms = next(b for s in lesson["sections"] for b in s["blocks"] if b["kind"] == "terms")
    assert [item["term"] for item in terms["items"]][:6] == [
        "map",
        "batch",
        "shuffle",
        "cache",
        "prefetch",
        "interleave",
    ]
    question_block = next(b for s in lesson["sections"] for b in s["blocks"] if b["kind"] == "question")
    assert set(question_block["question"]) == {"slug", "kind", "prompt", "board", "choices"}
    assert lesson["decks"][0]["card_count"] == Card.objects.filter(deck__slug=DECK, archived=False).count()


def test_deck_cards_are_paginated_in_order(learner_client, shipped_course):
    first = learner_client.get(f"/api/v1/decks/{DECK}/cards/?page_size=10").json()
    assert len(first["results"]) == 10
    assert first["next"] is not None
    everything = learner_client.get(f"/api/v1/decks/{DECK}/cards/?page_size=200").json()
    expected = list(
        Card.objects.filter(deck__slug=DECK, archived=False).order_by("position").values_list("slug", flat=True)
    )
    assert [card["slug"] for card in everything["results"]] == expected


def test_archived_cards_and_decks_are_hidden(learner_client, shipped_course):
    card = Card.objects.filter(deck__slug=DECK).order_by("position")[0]
    card.archived = True
    card.save()
    slugs = [c["slug"] for c in learner_client.get(f"/api/v1/decks/{DECK}/cards/?page_size=200").json()["results"]]
    assert card.slug not in slugs
    assert learner_client.get(f"/api/v1/cards/{card.pk}/").status_code == 404
    Deck.objects.filter(slug=DECK).update(archived=True)
    assert learner_client.get(f"/api/v1/decks/{DECK}/").status_code == 404
    assert learner_client.get("/api/v1/decks/").json()["count"] == 0


def test_deck_filters(learner_client, shipped_course):
    assert learner_client.get(f"/api/v1/decks/?course={COURSE}").json()["count"] == 1
    assert learner_client.get("/api/v1/decks/?course=elsewhere").json()["count"] == 0


def test_card_detail(learner_client, shipped_course):
    card = Card.objects.get(deck__slug=DECK, slug="prefetch")
    body = learner_client.get(f"/api/v1/cards/{card.pk}/").json()
    assert body["term"] == card.term
    assert body["deck"] == DECK


def test_concept_graph_links_every_card(learner_client, shipped_course):
    graph = learner_client.get(f"/api/v1/courses/{COURSE}/concept-graph/").json()
    covered = {card for concept in graph["concepts"] for card in concept["cards"]}
    assert covered == set(Card.objects.filter(deck__slug=DECK, archived=False).values_list("pk", flat=True))
    slugs = {concept["slug"] for concept in graph["concepts"]}
    assert all(link["source"] in slugs and link["target"] in slugs for link in graph["links"])


def test_explorer_scene(learner_client, shipped_course):
    assert learner_client.get("/api/v1/explorer/").json()["count"] == 1
    scene = learner_client.get("/api/v1/explorer/input-pipeline-explorer/").json()
    assert scene["model_url"] == "http://testserver/static/explorer/models/input-pipeline.glb"
    assert all({"slug", "title", "description", "cards"} <= set(region) for region in scene["regions"])


def test_exercise_shows_prompt_not_spec(learner_client, shipped_course):
    body = learner_client.get("/api/v1/exercises/tfrecord-image-pipeline/").json()
    assert body["entry_point"] == "build_pipeline"
    assert "spec" not in body


def test_exercise_names_the_concepts_it_practises_with_their_cards(learner_client, shipped_course):
    body = learner_client.get("/api/v1/exercises/records-that-do-not-parse/").json()
    concepts = {concept["slug"]: concept for concept in body["concepts"]}
    # In the course's order of concepts.
    assert list(concepts) == [
        "parallel-preprocessing",
        "serialized-formats",
        "record-parsing",
        "pipeline-validation",
        "pipeline-pitfalls",
    ]
    parsing = concepts["record-parsing"]
    assert parsing["name"] == "Record parsing and schemas"
    assert {(card["deck"], card["slug"]) for card in parsing["cards"]} == {
        ("tf-data-pipelines", "tf-train-example"),
        ("tf-data-pipelines", "deterministic-parsing-schemas"),
    }
    assert all(set(card) == {"id", "deck", "slug", "term"} for card in parsing["cards"])
    # An archived concept is not shown, and an archived card not offered for study.
    Concept.objects.filter(slug="serialized-formats").update(archived=True)
    Card.objects.filter(slug="deterministic-parsing-schemas").update(archived=True)
    body = learner_client.get("/api/v1/exercises/records-that-do-not-parse/").json()
    assert "serialized-formats" not in [concept["slug"] for concept in body["concepts"]]
    parsing = next(concept for concept in body["concepts"] if concept["slug"] == "record-parsing")
    assert [card["slug"] for card in parsing["cards"]] == ["tf-train-example"]


def test_no_answer_key_in_any_learner_response(learner_client, shipped_course):
    """Scan the raw JSON of every content endpoint for anything that would give an answer away."""
    urls = [
        "/api/v1/courses/",
        f"/api/v1/courses/{COURSE}/",
        f"/api/v1/lessons/{LESSON}/",
        "/api/v1/decks/",
        f"/api/v1/decks/{DECK}/",
        f"/api/v1/decks/{DECK}/cards/?page_size=200",
        f"/api/v1/courses/{COURSE}/concept-graph/",
        "/api/v1/explorer/",
        "/api/v1/explorer/input-pipeline-explorer/",
        "/api/v1/exercises/",
    ]
    urls += [f"/api/v1/questions/{slug}/" for slug in Question.objects.values_list("slug", flat=True)]
    urls += [f"/api/v1/exercises/{slug}/" for slug in PipelineExercise.objects.values_list("slug", flat=True)]
    raw = ""
    for url in urls:
        response = learner_client.get(url)
        assert response.status_code == 200, url
        raw += response.content.decode()
    for key in (
        '"correct"',
        '"is_correct"',
        '"accepted_answers"',
        '"answer"',
        '"numeric_answer"',
        '"tolerance"',
        '"explanation"',
        '"spec"',
        '"references"',
    ):
        assert key not in raw
    for explanation in Question.objects.values_list("explanation", flat=True):
        assert json.dumps(explanation)[1:-1] not in raw
    # Accepted answers can be ordinary words of the lesson, so look for them only beside their own question.
    for question in Question.objects.filter(kind="short_text"):
        body = learner_client.get(f"/api/v1/questions/{question.slug}/").content.decode()
        for answer in AcceptedAnswer.objects.filter(question=question).values_list("text", flat=True):
            assert json.dumps(answer) not in body
    assert Choice.objects.filter(is_correct=True).exists()
    for exercise in PipelineExercise.objects.all():
        for source in exercise.spec.get("references", {}).values():
            assert json.dumps(source)[1:-1] not in raw


@pytest.mark.parametrize(
    ("url", "queries"),
    [
        # A list's one page is short, so it tells its own count: the page alone.
        ("/api/v1/courses/", 1),
        ("/api/v1/decks/", 1),
        (f"/api/v1/decks/{DECK}/cards/?page_size=200", 2),
        ("/api/v1/explorer/", 1),
        # The page, the concepts its exercises practise and their cards.
        ("/api/v1/exercises/", 3),
        (f"/api/v1/lessons/{LESSON}/", 9),
        (f"/api/v1/courses/{COURSE}/concept-graph/", 4),
        ("/api/v1/explorer/input-pipeline-explorer/", 3),
    ],
)
def test_query_count_does_not_grow_with_content(learner_client, shipped_course, url, queries):
    """Counted after token auth (1 query) so the figure is the endpoint's own."""
    learner_client.get(url)  # warm any per-process caches
    with CaptureQueriesContext(connection) as captured:
        response = learner_client.get(url)
    assert response.status_code == 200
    own = [q for q in captured.captured_queries if "accounts_devicetoken" not in q["sql"]]
    assert len(own) == queries, "\n".join(q["sql"] for q in own)
