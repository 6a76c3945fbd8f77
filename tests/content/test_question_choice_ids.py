"""A question read outside a quiz shows its choices in a fresh order behind fresh random ids, every time."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from apps.content.models import Choice, Question, QuestionKind
from apps.content.serializers import PublicQuestionOutput

pytestmark = pytest.mark.django_db

RESPONSES = 200


def test_every_rendering_draws_new_ids_and_a_new_order(shipped_course):
    """The serializer every learner-facing question goes through (question pages, lesson blocks and lists)."""
    authored_keys = set(Choice.objects.values_list("key", flat=True))
    questions = Question.objects.filter(kind__in=[QuestionKind.SINGLE_CHOICE, QuestionKind.MULTIPLE_CHOICE])
    assert questions.count() >= 12
    ids_seen: Counter[str] = Counter()
    for question in questions.prefetch_related("choices"):
        correct_texts = {choice.text for choice in question.choices.all() if choice.is_correct}
        positions: dict[str, Counter[int]] = defaultdict(Counter)
        for _ in range(RESPONSES):
            for position, choice in enumerate(PublicQuestionOutput(question).data["choices"]):
                assert choice["key"] not in authored_keys
                ids_seen[choice["key"]] += 1
                if choice["text"] in correct_texts:
                    positions[choice["text"]][position] += 1
        for text, counts in positions.items():
            assert max(counts.values()) <= RESPONSES / 2, (question.slug, text, counts)
    assert ids_seen.most_common(1)[0][1] == 1


def test_the_question_page_draws_new_ids_per_response(learner_client, shipped_course):
    authored_keys = set(Choice.objects.values_list("key", flat=True))
    question = Question.objects.filter(kind=QuestionKind.MULTIPLE_CHOICE).first()
    assert question is not None
    bodies = [learner_client.get(f"/api/v1/questions/{question.slug}/").json() for _ in range(8)]
    ids = [choice["key"] for body in bodies for choice in body["choices"]]
    assert len(ids) == len(set(ids)) == 8 * question.choices.count()
    assert not set(ids) & authored_keys
    assert len({tuple(choice["text"] for choice in body["choices"]) for body in bodies}) > 1


def test_lesson_pages_show_question_choices_by_fresh_ids(learner_client, shipped_course):
    authored_keys = set(Choice.objects.values_list("key", flat=True))
    lesson = Question.objects.filter(kind=QuestionKind.SINGLE_CHOICE).values_list("lesson__slug", flat=True)[0]
    bodies = [learner_client.get(f"/api/v1/lessons/{lesson}/").json() for _ in range(3)]
    ids = [[choice["key"] for question in body["questions"] for choice in question["choices"]] for body in bodies]
    assert ids[0] and len(set(ids[0]) | set(ids[1]) | set(ids[2])) == 3 * len(ids[0])
    blocks = [
        block["question"]
        for section in bodies[0]["sections"]
        for block in section["blocks"]
        if block["kind"] == "question"
    ]
    assert blocks
    for question in [*bodies[0]["questions"], *blocks]:
        assert not {choice["key"] for choice in question["choices"]} & authored_keys
