"""Taking a quiz in real Chromium: every question kind answered, a reload resumes, the results match the database."""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import expect

from apps.accounts.devices import device_token_issue
from apps.content.models import Question, QuestionKind, Quiz
from apps.quizzes.models import QuizAnswer, QuizAttempt
from apps.quizzes.selectors import attempt_questions
from tests.support.browser import DESKTOP, PHONE, Browsing

if TYPE_CHECKING:
    pass

pytestmark = pytest.mark.django_db(transaction=True)

ALL_KINDS = {kind.value for kind in QuestionKind}


def _smallest_quiz_of_every_kind() -> Quiz:
    quizzes = [
        (quiz.items.filter(question__archived=False).count(), quiz.position, quiz)
        for quiz in Quiz.objects.filter(archived=False).prefetch_related("items__question")
        if {item.question.kind for item in quiz.items.all() if not item.question.archived} == ALL_KINDS
    ]
    assert quizzes, "the shipped course has no quiz with every question kind"
    return min(quizzes, key=lambda entry: entry[:2])[2]


def _both_sizes(desktop: Browsing, name: str) -> None:
    """Screenshots at both sizes, each checked by axe and for sideways scrolling; back at desktop size after."""
    for viewport in (PHONE, DESKTOP):
        desktop.page.set_viewport_size({"width": viewport.width, "height": viewport.height})
        sized = dataclasses.replace(desktop, viewport=viewport)
        sized.screenshot(name)
        assert desktop.scroll_width() <= viewport.width, (name, viewport.name)
        assert desktop.axe_serious() == [], (name, viewport.name)


def _answer(desktop: Browsing, question: Question, position: int) -> float:
    """Answers one question, some right and some wrong by the key in the database; returns the credit expected."""
    page = desktop.page
    if question.kind == QuestionKind.SINGLE_CHOICE:
        choices = list(question.choices.all())
        right = position % 2 == 0
        pick = next(choice for choice in choices if choice.is_correct == right)
        radio = page.get_by_role("radio", name=pick.text.strip(), exact=True)
        # Focused and pressed in one step, which waits for the radio the page renders: a keyboard answer.
        radio.press("Space")
        expect(radio).to_be_checked()
        page.get_by_role("button", name="Check answer").click()
        return 1.0 if right else 0.0
    if question.kind == QuestionKind.MULTIPLE_CHOICE:
        correct = [choice for choice in question.choices.all() if choice.is_correct]
        assert len(correct) >= 2
        # All but one of the correct choices and no wrong one: partial credit.
        for choice in correct[:-1]:
            page.get_by_role("checkbox", name=choice.text.strip(), exact=True).check()
        page.get_by_role("button", name="Check answer").click()
        return (len(correct) - 1) / len(correct)
    box = page.get_by_label("Your answer")
    if question.kind == QuestionKind.SHORT_TEXT:
        accepted = question.accepted_answers.all()[0].text
        # Typed in another case and sent with Enter, from the keyboard alone.
        box.fill(accepted.lower())
        box.press("Enter")
        return 1.0
    assert question.numeric_answer is not None and question.tolerance is not None
    right = position % 2 == 1
    value = question.numeric_answer if right else question.numeric_answer + question.tolerance + 1
    box.fill(f"{value:g}")
    page.get_by_role("button", name="Check answer").click()
    return 1.0 if right else 0.0


def test_a_quiz_is_taken_resumed_after_a_reload_and_scored(
    desktop: Browsing, shipped_course: None, learner: Any
) -> None:
    quiz = _smallest_quiz_of_every_kind()
    desktop.sign_in_with_token(device_token_issue(user=learner, device_name=None).key)
    desktop.goto(f"/quizzes/{quiz.slug}")
    page = desktop.page
    page.get_by_role("heading", name=quiz.title, exact=True).wait_for()
    page.get_by_text("You have not taken this quiz yet.").wait_for()
    count = quiz.items.filter(question__archived=False).count()
    facts = page.locator(".quiz-facts").inner_text()
    assert re.search(rf"Questions\s+{count}\b", facts), facts
    _both_sizes(desktop, "quiz")

    page.get_by_role("button", name="Start", exact=True).click()
    page.wait_for_url(re.compile(r"/quiz-attempts/\d+$"))
    attempt = QuizAttempt.objects.get(learner=learner, quiz=quiz)
    assert page.url.endswith(f"/quiz-attempts/{attempt.pk}")
    questions = attempt_questions(attempt)
    assert len(questions) == count

    expected: dict[str, float] = {}
    shot: set[str] = set()
    for position, question in enumerate(questions):
        page.get_by_text(f"Question {position + 1} of {count}", exact=True).wait_for()
        if question.kind not in shot:
            shot.add(question.kind)
            _both_sizes(desktop, f"quiz-question-{question.kind.replace('_', '-')}")
        with page.expect_response(lambda response: response.url.endswith("/answers/")) as posted:
            expected[question.slug] = _answer(desktop, question, position)
        assert posted.value.status == 201
        # The page moves focus to the graded answer once it is drawn; the keys below start from there.
        expect(page.locator(".quiz-feedback")).to_be_focused()
        saved = QuizAnswer.objects.get(attempt=attempt, question=question)
        assert saved.credit == pytest.approx(expected[question.slug]), question.slug
        if position == 2:
            # Reloading mid-attempt opens the first unanswered question, the answers kept.
            page.reload()
            page.get_by_text(f"Question 4 of {count}", exact=True).wait_for()
            assert page.get_by_text("3 answers saved").count() == 1
            assert QuizAnswer.objects.filter(attempt=attempt).count() == 3
            continue
        next_name = "See your results" if position == count - 1 else "Next question"
        page.get_by_role("button", name=next_name).focus()
        page.keyboard.press("Enter")
        if position < count - 1:
            # Keyboard users land on the next question's heading; the keys for its answer start from there.
            expect(page.get_by_role("heading", name=f"Question {position + 2}", exact=True)).to_be_focused()

    page.get_by_role("heading", name="Your results").wait_for()
    attempt.refresh_from_db()
    assert attempt.finished_at is not None and attempt.score is not None
    assert attempt.score == pytest.approx(sum(expected.values()) / count)
    score = page.locator(".quiz-score-value").inner_text()
    assert f"{round(attempt.score * 100)}%" in score, score
    body = page.locator("main").inner_text()
    multiple = next(q for q in questions if q.kind == QuestionKind.MULTIPLE_CHOICE)
    right = sum(1 for choice in multiple.choices.all() if choice.is_correct)
    partial = f"{round((right - 1) / right, 2):g} of 1 ({right - 1} of the {right} correct choices picked)"
    assert f"Credit: {partial}" in body, body[:2000]
    # Every question shows its explanation and the correct answer.
    assert page.locator(".quiz-result").count() == count
    assert page.locator(".quiz-explanation").count() == count
    assert body.count("Correct answer") + body.count("Accepted answers") >= count
    _both_sizes(desktop, "quiz-results")

    # The quiz page now lists the finished attempt with its score.
    desktop.goto(f"/quizzes/{quiz.slug}")
    history = page.locator(".quiz-history")
    history.wait_for()
    assert f"{round(attempt.score * 100)}%" in history.inner_text()
    assert desktop.console_errors == []


def test_an_unknown_attempt_is_said_in_words(desktop: Browsing, learner: Any) -> None:
    desktop.sign_in_with_token(device_token_issue(user=learner, device_name=None).key)
    desktop.goto("/quiz-attempts/999999")
    alert = desktop.page.get_by_role("alert").first
    alert.wait_for()
    assert "999999" in alert.inner_text() or "not found" in alert.inner_text().lower()
    assert '{"error"' not in desktop.page.locator("body").inner_text()
