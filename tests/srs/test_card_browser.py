"""The card browser: a course's cards with the learner's memory of each, searched, filtered and paged,
and one card's history, through the real review API."""

from __future__ import annotations

from datetime import timedelta

import pytest

from apps.content.models import Card, Concept
from apps.srs.models import CardMemory, ReviewLog
from tests.support.api import make_learner
from tests.support.progress import counted_get, days_ago, leech_reviews, second_deck
from tests.support.reviews import DECK, post_review, review_body

pytestmark = pytest.mark.django_db

COURSE = "tensorflow-ai-phd"
URL = f"/api/v1/courses/{COURSE}/cards/"


def _review(client, card: Card, rating: int, at) -> dict:
    response = post_review(client, review_body(card, rating, at))
    assert response.status_code == 201, response.json()
    return response.json()


def _all(client, **params) -> list[dict]:
    response = client.get(URL, {"page_size": 200, **params})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["count"] == len(body["results"])
    return body["results"]


def _ids(items: list[dict]) -> list[int]:
    return [item["card"]["id"] for item in items]


def test_every_card_of_the_course_is_listed_in_course_order_new_ones_as_new(learner_client, deck_cards):
    items = _all(learner_client)
    visible = Card.objects.visible().filter(deck__lesson__course__slug=COURSE)
    assert len(items) == visible.count() >= len(deck_cards)
    assert _ids(items)[: len(deck_cards)] == [card.pk for card in deck_cards]
    first = items[0]
    assert first["deck"] == DECK and first["deck_title"]
    assert (first["stage"], first["due"], first["recall_probability"], first["reviews"]) == ("new", None, None, 0)
    assert not first["is_due"] and not first["is_leech"] and not first["suspended"]
    assert first["recall_computed_at"]


def test_a_reviewed_card_shows_the_learners_memory_and_nobody_elses(learner_client, learner, deck_cards):
    card = deck_cards[2]
    _review(learner_client, card, 3, days_ago(10))
    _review(learner_client, card, 3, days_ago(9))
    item = next(item for item in _all(learner_client) if item["card"]["id"] == card.pk)
    memory = CardMemory.objects.get(learner=learner, card=card)
    assert item["stage"] == "review" and item["reviews"] == memory.reps == 2
    assert item["due"] is not None and 0 < item["recall_probability"] < 1
    assert item["last_review"].startswith(days_ago(9).date().isoformat())
    # Another learner sees the same card as new.
    _, other = make_learner("browser-other")
    theirs = next(item for item in _all(other) if item["card"]["id"] == card.pk)
    assert theirs["stage"] == "new" and theirs["recall_probability"] is None


def test_states_filter_the_cards(learner_client, learner, deck_cards):
    due_card, learning_card, leech = deck_cards[0], deck_cards[1], deck_cards[2]
    _review(learner_client, due_card, 3, days_ago(40))
    _review(learner_client, due_card, 3, days_ago(39))
    _review(learner_client, learning_card, 1, days_ago(0) - timedelta(minutes=1))
    for body in leech_reviews(leech, lapses=8, start=days_ago(30)):
        assert post_review(learner_client, body).status_code == 201
    CardMemory.objects.filter(learner=learner, card=due_card).update(due=days_ago(1))

    assert _ids(_all(learner_client, state="leech")) == [leech.pk]
    assert _ids(_all(learner_client, state="relearning")) == [leech.pk]
    assert _ids(_all(learner_client, state="learning")) == [learning_card.pk]
    assert due_card.pk in _ids(_all(learner_client, state="due"))
    assert _ids(_all(learner_client, state="review")) == [due_card.pk]
    new = _ids(_all(learner_client, state="new"))
    assert not {due_card.pk, learning_card.pk, leech.pk} & set(new)
    assert len(new) == len(_all(learner_client)) - 3
    CardMemory.objects.filter(learner=learner, card=leech).update(suspended=True)
    assert _ids(_all(learner_client, state="suspended")) == [leech.pk]
    # A suspended card is not due, whatever its due time.
    CardMemory.objects.filter(learner=learner, card=leech).update(due=days_ago(1))
    assert leech.pk not in _ids(_all(learner_client, state="due"))


def test_text_search_needs_every_word_in_any_field_or_tag(learner_client, deck_cards):
    card = deck_cards[3]
    card.tags = ["Zebra-Tag"]
    card.save(update_fields=["tags"])
    word = card.term.split()[0]
    found = _ids(_all(learner_client, q=word.upper()))
    assert card.pk in found
    assert all(word.lower() in str(item).lower() for item in _all(learner_client, q=word))
    assert _ids(_all(learner_client, q="zebra-tag")) == [card.pk]
    assert _ids(_all(learner_client, q=f"zebra-tag {word}")) == [card.pk]
    assert _all(learner_client, q="zebra-tag nothing-matches-this") == []
    # A blank search is no search.
    assert len(_all(learner_client, q="   ")) == len(_all(learner_client))


def test_concept_and_deck_filters_and_their_names(learner_client, deck_cards):
    concept = Concept.objects.filter(course__slug=COURSE, cards__isnull=False).order_by("position")[0]
    taught = set(concept.cards.filter(archived=False).values_list("pk", flat=True))
    items = _all(learner_client, concept=concept.slug)
    assert set(_ids(items)) == taught and items
    assert all(concept.slug in [named["slug"] for named in item["concepts"]] for item in items)
    assert {"slug": concept.slug, "name": concept.name} in items[0]["concepts"]
    extra = second_deck(cards=2)
    assert _ids(_all(learner_client, deck=extra.slug)) == list(
        extra.cards.order_by("position").values_list("pk", flat=True)
    )
    # A filter that names nothing of the course matches nothing.
    assert _all(learner_client, concept="no-such-concept") == []
    assert _all(learner_client, deck="no-such-deck") == []


def test_orders_put_new_cards_last(learner_client, deck_cards):
    early, late, lapsed = deck_cards[5], deck_cards[4], deck_cards[6]
    _review(learner_client, late, 4, days_ago(2))
    _review(learner_client, early, 1, days_ago(3))
    for body in leech_reviews(lapsed, lapses=2, start=days_ago(20)):
        assert post_review(learner_client, body).status_code == 201
    by_due = _ids(_all(learner_client, order="due"))
    assert by_due.index(early.pk) < by_due.index(late.pk) and len(by_due) > 3
    assert set(by_due[3:]).isdisjoint({early.pk, late.pk, lapsed.pk})
    assert _ids(_all(learner_client, order="lapses"))[0] == lapsed.pk
    assert _ids(_all(learner_client, order="recent"))[:3] == [late.pk, early.pk, lapsed.pk]


def test_pages_and_their_cost_do_not_grow_with_the_cards(learner_client, deck_cards):
    for card in deck_cards[:5]:
        _review(learner_client, card, 3, days_ago(1))
    first = learner_client.get(URL, {"page_size": 5}).json()
    second = learner_client.get(URL, {"page_size": 5, "page": 2}).json()
    assert first["count"] == second["count"] > 10
    assert not set(_ids(first["results"])) & set(_ids(second["results"]))
    # Both pages full, so both are counted: the statements differ only if rows cost queries.
    small, small_sql = counted_get(learner_client, f"{URL}?page_size=2")
    large, large_sql = counted_get(learner_client, f"{URL}?page_size=10")
    assert small.status_code == large.status_code == 200
    assert len(small_sql) == len(large_sql)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"state": "forgotten"}, "state"),
        ({"order": "random"}, "order"),
        ({"q": "x" * 201}, "q"),
        ({"page_size": 0}, "page_size"),
        ({"concept": "Not A Slug!"}, "concept"),
        ({"q": "tab\there"}, "q"),
    ],
)
def test_bad_queries_are_400s_in_the_error_shape(learner_client, shipped_course, params, field):
    response = learner_client.get(URL, params)
    assert response.status_code == 400
    body = response.json()
    assert body["error"]["code"] == "invalid" and field in str(body["error"])


def test_an_unknown_course_is_a_404_and_the_browser_needs_a_sign_in(learner_client, api_client, shipped_course):
    response = learner_client.get("/api/v1/courses/no-such-course/cards/")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    assert api_client.get(URL).status_code == 401


def test_a_cards_history_is_its_standing_reviews_with_what_the_model_expected(learner_client, learner, deck_cards):
    card = deck_cards[0]
    _review(learner_client, card, 3, days_ago(12))
    second = _review(learner_client, card, 1, days_ago(5))
    third = _review(learner_client, card, 3, days_ago(4))
    assert learner_client.post(f"/api/v1/reviews/{third['id']}/undo/").status_code in (200, 201)
    response = learner_client.get(f"/api/v1/cards/{card.pk}/history/")
    assert response.status_code == 200
    body = response.json()
    assert body["card"]["id"] == card.pk and body["deck"] == DECK
    history = body["history"]
    # The undone review is not part of it.
    assert [review["rating"] for review in history] == [3, 1]
    assert history[1]["id"] == second["id"]
    assert history[0]["stage_before"] == "new" and history[0]["recall_before"] is None
    assert history[1]["stage_before"] != "new" and 0 < history[1]["recall_before"] < 1
    stored = ReviewLog.objects.get(pk=second["id"]).state_after
    assert stored is not None
    assert history[1]["stability_days"] == pytest.approx(stored["stability"])
    assert history[0]["interval_days"] > 0
    # The undo restored the memory the second review left: a learning card (Again while learning is no lapse).
    memory = CardMemory.objects.get(learner=learner, card=card)
    shown = (body["reviews"], body["lapses"], body["stage"])
    assert shown == (memory.reps, memory.lapses, "learning") == (2, 0, "learning")


def test_an_unseen_card_has_an_empty_history_and_a_hidden_one_is_a_404(learner_client, deck_cards):
    card = deck_cards[1]
    body = learner_client.get(f"/api/v1/cards/{card.pk}/history/").json()
    assert body["history"] == [] and body["stage"] == "new"
    card.archived = True
    card.save(update_fields=["archived"])
    assert learner_client.get(f"/api/v1/cards/{card.pk}/history/").status_code == 404
    assert learner_client.get(f"/api/v1/cards/{2**63}/history/").status_code == 404
