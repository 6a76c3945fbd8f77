"""Admin previews: a card and a question as a learner sees them; trying an answer grades it and records nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from apps.content.content_files.load import content_sources_load
from apps.content.content_files.source import ContentSource
from apps.content.models import Card, CardFormat, Deck, Question
from apps.quizzes.grading import Grade
from tests.support.course_files import minimal_course, to_yaml

pytestmark = pytest.mark.django_db

# Rows of these apps are what a learner's answer leaves behind: attempts, answers, memories, reviews.
RECORDING_APPS = ("quizzes", "srs")


@pytest.fixture
def course(db: Any) -> None:
    content_sources_load(sources=[ContentSource("course.yaml", to_yaml(minimal_course()))])


def preview_url(obj: Card | Question) -> str:
    return reverse(f"admin:content_{obj._meta.model_name}_preview", args=[obj.pk])


def main_html(response: Any) -> str:
    """The page's own content, without the admin's navigation (which names every model)."""
    html = response.content.decode()
    return html[html.index('<div id="content-main">') :]


def recorded_rows() -> dict[str, int]:
    return {
        model._meta.label: model._default_manager.count()
        for label in RECORDING_APPS
        for model in apps.get_app_config(label).get_models()
    }


# --- Cards -------------------------------------------------------------------------------------


def test_card_change_page_links_to_its_preview(staff_client, course):
    card = Card.objects.get(slug="map")
    html = staff_client.get(reverse("admin:content_card_change", args=[card.pk])).content.decode()
    assert f'href="{preview_url(card)}"' in html


def test_card_preview_shows_front_and_back_with_a_flip_button_for_scripts(staff_client, course):
    card = Card.objects.get(slug="batch")
    response = staff_client.get(preview_url(card))
    assert response.status_code == 200
    html = response.content.decode()
    assert '<p class="study-card-term">batch</p>' in html
    assert "Stack samples into fixed-size groups" in html
    # The button is hidden until the script shows it; without the script both sides stay visible.
    assert "data-study-card-flip hidden>Flip</button>" in html
    assert "admin/content/card_preview.js" in html
    assert finders.find("admin/content/card_preview.js")
    assert "learners do not see this" not in html


def test_card_preview_shows_example_and_code(staff_client, course):
    card = Card.objects.get(slug="map")
    card.example = "ds.map(parse)"
    card.code = "def parse(x):\n    return x"
    card.save()
    html = staff_client.get(preview_url(card)).content.decode()
    assert "ds.map(parse)" in html
    assert '<pre class="study-card-code"><code>def parse(x):\n    return x</code></pre>' in html


def test_an_html_card_shows_its_allowed_markup_and_nothing_else(staff_client, course):
    card = Card.objects.get(slug="map")
    # Written around the rules, straight to the row: the page still shows only the allowed part.
    Card.objects.filter(pk=card.pk).update(
        format=CardFormat.HTML,
        definition='Runs <b>fn</b> on each element<script>alert(1)</script><img src="https://evil.example/x.png">',
        example='<i>ds.map(fn)</i><a href="javascript:alert(2)">go</a>',
    )
    html = main_html(staff_client.get(preview_url(card)))
    assert "Runs <b>fn</b> on each element" in html
    assert "<i>ds.map(fn)</i>go" in html
    assert "alert(" not in html and "evil.example" not in html


def test_a_text_card_shows_markup_as_text(staff_client, course):
    card = Card.objects.get(slug="map")
    Card.objects.filter(pk=card.pk).update(definition="Runs <b>fn</b> on each element")
    html = main_html(staff_client.get(preview_url(card)))
    assert "Runs &lt;b&gt;fn&lt;/b&gt; on each element" in html


def test_archived_card_and_card_of_an_archived_deck_are_marked(staff_client, course):
    card = Card.objects.get(slug="map")
    Card.objects.filter(pk=card.pk).update(archived=True)
    assert (
        "Archived: learners do not see this (this card is archived)."
        in staff_client.get(preview_url(card)).content.decode()
    )

    Card.objects.filter(pk=card.pk).update(archived=False)
    Deck.objects.update(archived=True)
    assert (
        "Archived: learners do not see this (its deck is archived)."
        in staff_client.get(preview_url(card)).content.decode()
    )


def test_previews_are_for_staff_with_view_permission(client, learner, course):
    card = Card.objects.get(slug="map")
    question = Question.objects.get(slug="overlap")
    client.force_login(learner)
    for url in (preview_url(card), preview_url(question)):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("admin:login"))

    staff_without_permissions = get_user_model().objects.create_user(username="kay", password="x" * 20, is_staff=True)
    client.force_login(staff_without_permissions)
    assert client.get(preview_url(card)).status_code == 403
    assert client.post(preview_url(question), {}).status_code == 403


def test_preview_of_a_missing_card_is_not_found(staff_client, course):
    assert staff_client.get(reverse("admin:content_card_preview", args=[999999])).status_code == 404


# --- Questions ---------------------------------------------------------------------------------


def shown_choice_ids(response: Any) -> dict[str, str]:
    """{choice text: the id the page shows for it}."""
    return {choice["text"]: choice["key"] for choice in response.context["question"]["choices"]}


def try_answer(staff_client: Client, question: Question, **answer: Any) -> Any:
    page = staff_client.get(preview_url(question))
    ids = shown_choice_ids(page)
    data: dict[str, Any] = {"board": page.context["board"]}
    if "choice" in answer:
        data["choice"] = ids[answer["choice"]]
    elif "choices" in answer:
        data["choices"] = [ids[text] for text in answer["choices"]]
    else:
        data.update(answer)
    return staff_client.post(preview_url(question), data)


def test_question_change_page_links_to_its_preview(staff_client, course):
    question = Question.objects.get(slug="overlap")
    html = staff_client.get(reverse("admin:content_question_change", args=[question.pk])).content.decode()
    assert f'href="{preview_url(question)}"' in html


@pytest.mark.parametrize(
    ("slug", "right", "wrong"),
    [
        ("overlap", {"choice": "prefetch"}, {"choice": "cache"}),
        ("pitfalls", {"choices": ["Forgetting prefetch", "Python threads"]}, {"choices": ["Using tf.data"]}),
        ("format", {"text": "tfrecords"}, {"text": "csv"}),
        ("batches", {"number": "32"}, {"number": "31.5"}),
    ],
    ids=["single_choice", "multiple_choice", "short_text", "numeric"],
)
def test_question_preview_shows_no_key_then_grades_and_records_nothing(staff_client, course, slug, right, wrong):
    question = Question.objects.get(slug=slug)
    before = recorded_rows()

    page = staff_client.get(preview_url(question))
    assert page.status_code == 200
    html = main_html(page)
    # The learner's quiz shape, and nothing of the answer key before answering.
    assert set(page.context["question"]) == {"id", "slug", "kind", "prompt", "choices"}
    assert escape(question.explanation) not in html
    assert "The right answer" not in html
    assert "Accepted answers" not in html
    texts = sorted(choice.text for choice in question.choices.all())
    assert sorted(shown_choice_ids(page)) == texts
    for choice in question.choices.all():
        assert f'value="{choice.key}"' not in html

    graded_right = try_answer(staff_client, question, **right)
    assert graded_right.status_code == 200
    assert graded_right.context["tried"].grade == Grade(1.0)
    right_html = graded_right.content.decode()
    assert "<h2>Correct: credit 1</h2>" in right_html
    assert escape(question.explanation) in right_html

    graded_wrong = try_answer(staff_client, question, **wrong)
    assert graded_wrong.context["tried"].grade == Grade(0.0)
    assert "<h2>Wrong: credit 0</h2>" in graded_wrong.content.decode()

    assert recorded_rows() == before


def test_a_partly_right_multiple_choice_answer_gets_partial_credit(staff_client, course):
    question = Question.objects.get(slug="pitfalls")
    response = try_answer(staff_client, question, choices=["Forgetting prefetch"])
    assert response.context["tried"].grade == Grade(0.5)
    html = response.content.decode()
    assert "<h2>Partly right: credit 0.5</h2>" in html
    assert "Your answer: Forgetting prefetch" in html
    assert "The right answer: Forgetting prefetch; Python threads" in html or (
        "The right answer: Python threads; Forgetting prefetch" in html
    )


def test_the_answer_key_appears_after_trying(staff_client, course):
    short_text = try_answer(staff_client, Question.objects.get(slug="format"), text="csv").content.decode()
    assert "Accepted answers: TFRecord; Parquet" in short_text
    numeric = try_answer(staff_client, Question.objects.get(slug="batches"), number="1").content.decode()
    assert "The right answer: 32.0" in numeric


@pytest.mark.parametrize(
    ("slug", "data", "message"),
    [
        ("batches", {"number": "thirty-two"}, "Enter a number."),
        ("batches", {"number": "nan"}, "The number must be finite."),
        ("overlap", {}, "answered with &#x27;choice&#x27;"),
        ("overlap", {"choice": "a"}, "No choice &#x27;a&#x27;"),
        ("pitfalls", {}, "Pick at least one choice"),
    ],
)
def test_an_answer_that_does_not_fit_is_a_clear_400(staff_client, course, slug, data, message):
    question = Question.objects.get(slug=slug)
    board = staff_client.get(preview_url(question)).context["board"]
    before = recorded_rows()
    response = staff_client.post(preview_url(question), {"board": board, **data})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert response.context["tried"] is None
    assert recorded_rows() == before


def test_a_try_without_its_board_is_refused(staff_client, course):
    question = Question.objects.get(slug="overlap")
    response = staff_client.post(preview_url(question), {"choice": "whatever"})
    assert response.status_code == 400
    assert "The form was incomplete; try again." in response.content.decode()


def test_the_choices_keep_their_ids_within_a_try_and_change_between_views(staff_client, course):
    question = Question.objects.get(slug="pitfalls")
    first = staff_client.get(preview_url(question))
    second = staff_client.get(preview_url(question))
    assert set(shown_choice_ids(first).values()).isdisjoint(shown_choice_ids(second).values())
    ids = shown_choice_ids(first)
    tried = staff_client.post(
        preview_url(question), {"board": first.context["board"], "choices": [ids["Python threads"]]}
    )
    assert shown_choice_ids(tried) == ids
    assert f'value="{ids["Python threads"]}" checked' in tried.content.decode()


def test_archived_question_is_marked(staff_client, course):
    question = Question.objects.get(slug="overlap")
    Question.objects.filter(pk=question.pk).update(archived=True)
    html = staff_client.get(preview_url(question)).content.decode()
    assert "Archived: learners do not see this (this question is archived)." in html
