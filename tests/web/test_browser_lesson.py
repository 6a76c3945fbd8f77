"""A lesson's questions answered in place in real Chromium: the grade and explanation shown, every try stored."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest

from apps.content.models import LessonBlock, Question
from apps.quizzes.models import LessonAnswer, QuestionMemory
from tests.support.browser import DESKTOP, SCREENSHOTS_DIR, Browsing, browsing

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator

pytestmark = pytest.mark.django_db(transaction=True)


def _inline_questions() -> dict[str, Question]:
    """The first question of each kind that a lesson shows inline, in the shipped course."""
    found: dict[str, Question] = {}
    blocks = LessonBlock.objects.filter(question__isnull=False).select_related("question", "section__lesson")
    for block in blocks.order_by("section__lesson__position", "section__position", "position"):
        assert block.question is not None
        found.setdefault(block.question.kind, block.question)
    return found


def _box(web: Browsing, question: Question) -> Locator:
    return web.page.locator(f'section.inline-question[aria-labelledby="q-{question.slug}"]')


def _letters(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _pick(box: Locator, texts: list[str]) -> None:
    for text in texts:
        box.locator(".choice-text", has_text=re.compile(rf"^\s*{re.escape(text)}\s*$")).click()


def _feedback(box: Locator, headline: str, question: Question) -> str:
    status = box.get_by_role("status")
    status.locator(".feedback-headline", has_text=headline).wait_for()
    shown = status.inner_text()
    # The explanation is authored text rendered as text: compare without its markup.
    assert _letters(question.explanation)[:60] in _letters(shown), shown
    return shown


def _tries(learner: Any, question: Question) -> list[tuple[bool, float, bool]]:
    rows = LessonAnswer.objects.filter(learner=learner, question=question).order_by("answered_at", "pk")
    return [(row.correct, row.credit, row.scheduled) for row in rows]


def test_each_kind_is_answered_in_place_wrong_then_right(
    desktop: Browsing, shipped_course: None, learner: Any, token: str
) -> None:
    from playwright.sync_api import expect

    questions = _inline_questions()
    assert set(questions) == {"single_choice", "multiple_choice", "short_text", "numeric"}
    lesson = questions["single_choice"].lesson
    desktop.sign_in_with_token(token)
    desktop.goto(f"/lessons/{lesson.slug}")
    desktop.page.get_by_role("heading", name=lesson.title, exact=False).first.wait_for()
    # Checking before answering says what is missing and sends nothing.
    unanswered = _box(desktop, questions["single_choice"])
    unanswered.get_by_role("button", name="Check answer").click()
    unanswered.get_by_text("Pick an answer first.").wait_for()
    assert not LessonAnswer.objects.exists()

    for kind in ("single_choice", "multiple_choice"):
        question = questions[kind]
        assert question.lesson_id == lesson.pk
        box = _box(desktop, question)
        right = list(question.choices.filter(is_correct=True).values_list("text", flat=True))
        wrong = list(question.choices.filter(is_correct=False).values_list("text", flat=True))[:1]
        _pick(box, wrong)
        box.get_by_role("button", name="Check answer").click()
        shown = _feedback(box, "Not quite.", question)
        assert "your answer, not correct" in shown or box.locator(".mark-wrong-picked").count() == 1
        assert box.locator(".mark-correct-missed").count() == len(right)
        assert _tries(learner, question) == [(False, 0.0, True)]
        # Try again is where the focus went: the keyboard takes it from there.
        expect(box.get_by_role("button", name="Try again")).to_be_focused()
        desktop.page.keyboard.press("Enter")
        _pick(box, right)
        box.get_by_role("button", name="Check answer").click()
        _feedback(box, "Correct.", question)
        assert "Saved as practice" in box.get_by_role("status").inner_text()
        # The second go, right after seeing the key, is kept but does not count for review.
        assert _tries(learner, question) == [(False, 0.0, True), (True, 1.0, False)]
        assert QuestionMemory.objects.get(learner=learner, question=question).reps == 1

    text_question = questions["short_text"]
    accepted = list(text_question.accepted_answers.values_list("text", flat=True))
    number_question = questions["numeric"]
    assert number_question.numeric_answer is not None and number_question.tolerance is not None
    typed = {
        "short_text": (text_question, "definitely not it", accepted[0]),
        "numeric": (
            number_question,
            str(number_question.numeric_answer + number_question.tolerance + 1000),
            f"{number_question.numeric_answer:g}",
        ),
    }
    for question, wrong_text, right_text in typed.values():
        box = _box(desktop, question)
        field = box.get_by_role("textbox")
        # Keyboard only: type, Enter to check, Enter on Try again, and the field has the focus back.
        field.focus()
        desktop.page.keyboard.type(wrong_text)
        desktop.page.keyboard.press("Enter")
        _feedback(box, "Not quite.", question)
        assert _tries(learner, question) == [(False, 0.0, True)]
        expect(box.get_by_role("button", name="Try again")).to_be_focused()
        desktop.page.keyboard.press("Enter")
        expect(field).to_be_focused()
        desktop.page.keyboard.type(right_text)
        desktop.page.keyboard.press("Enter")
        _feedback(box, "Correct.", question)
        assert _tries(learner, question) == [(False, 0.0, True), (True, 1.0, False)]

    assert LessonAnswer.objects.filter(learner=learner).count() == 8
    assert desktop.axe_serious() == []
    assert desktop.console_errors == []


def test_a_part_right_answer_shows_its_credit(
    desktop: Browsing, shipped_course: None, learner: Any, token: str
) -> None:
    question = _inline_questions()["multiple_choice"]
    right = list(question.choices.filter(is_correct=True).values_list("text", flat=True))
    assert len(right) >= 2
    desktop.sign_in_with_token(token)
    desktop.goto(f"/lessons/{question.lesson.slug}")
    box = _box(desktop, question)
    _pick(box, right[:1])
    box.get_by_role("button", name="Check answer").click()
    shown = _feedback(box, "Partly right", question)
    credit = round(100 / len(right))
    assert f"{credit}% credit" in shown
    [(correct, stored_credit, scheduled)] = _tries(learner, question)
    assert (correct, scheduled) == (False, True) and round(stored_credit * 100) == credit


def test_the_lesson_with_an_answered_question(web: Browsing, shipped_course: None, learner: Any, token: str) -> None:
    question = _inline_questions()["single_choice"]
    web.sign_in_with_token(token)
    web.goto(f"/lessons/{question.lesson.slug}")
    box = _box(web, question)
    _pick(box, list(question.choices.filter(is_correct=True).values_list("text", flat=True)))
    box.get_by_role("button", name="Check answer").click()
    _feedback(box, "Correct.", question)
    box.scroll_into_view_if_needed()
    assert web.scroll_width() <= web.viewport.width
    web.screenshot("lesson-answered")
    # The answered question alone, at the same size: the full page is long.
    box.screenshot(path=str(SCREENSHOTS_DIR / f"lesson-question-answered-{web.viewport.name}.png"))
    assert web.axe_serious() == []
    assert web.console_errors == []
    assert _tries(learner, question) == [(True, 1.0, True)]


def test_a_code_example_is_coloured_and_copied_whole(
    chromium: Browser, live_server: Any, shipped_course: None, token: str
) -> None:
    web = browsing(chromium, live_server.url, DESKTOP, permissions=["clipboard-read", "clipboard-write"])
    try:
        web.sign_in_with_token(token)
        blocks = LessonBlock.objects.filter(kind="code", payload__language="python")
        block = blocks.order_by("section__position", "position")[0]
        code = block.payload["code"]
        web.goto("/lessons/data-pipelines-tf-data")
        web.page.locator(".code-block pre").first.wait_for()
        pre = web.page.locator(".code-block pre code").first
        # The coloured text is the code, every character of it.
        shown = [element.inner_text() for element in web.page.locator(".code-block pre code").all()]
        assert code.strip() in [text.strip() for text in shown]
        assert pre.locator(".tok-keyword").count() > 0
        keyword = pre.locator(".tok-keyword").first.evaluate("(element) => getComputedStyle(element).color")
        assert keyword == "rgb(216, 168, 255)"
        target = web.page.locator(".code-block").filter(has_text=code.strip().splitlines()[0]).first
        target.get_by_role("button", name=re.compile(r"^Copy")).click()
        target.get_by_role("status").filter(has_text="Copied.").wait_for()
        assert web.page.evaluate("navigator.clipboard.readText()") == code
        assert web.axe_serious() == []
        assert web.console_errors == []
    finally:
        web.close()


def test_answers_given_in_place_are_shown_again_after_a_reload_and_tried_afresh(
    web: Browsing, shipped_course: None, learner: Any, token: str
) -> None:
    choice = _inline_questions()["multiple_choice"]
    typed = _inline_questions()["short_text"]
    right = list(choice.choices.filter(is_correct=True).values_list("text", flat=True))
    web.sign_in_with_token(token)
    web.goto(f"/lessons/{choice.lesson.slug}")
    box = _box(web, choice)
    _pick(box, right[:1])
    box.get_by_role("button", name="Check answer").click()
    _feedback(box, "Partly right", choice)
    if typed.lesson_id == choice.lesson_id:
        typed_box = _box(web, typed)
        typed_box.get_by_label("Your answer").fill("no such thing")
        typed_box.get_by_role("button", name="Check answer").click()
        _feedback(typed_box, "Not quite", typed)

    web.page.reload()
    box = _box(web, choice)
    # As it was left: the pick ticked, every choice marked, the credit and explanation, and when it was given.
    shown = _feedback(box, "Partly right", choice)
    assert "Your answer of" in shown
    picked = box.locator(".choice", has_text=right[0]).locator("input")
    assert picked.is_checked() and picked.is_disabled()
    assert box.locator(".choice-mark").count() >= len(right)
    if typed.lesson_id == choice.lesson_id:
        typed_box = _box(web, typed)
        _feedback(typed_box, "Not quite", typed)
        assert typed_box.get_by_label("Your answer").input_value() == "no such thing"
    assert web.axe_serious() == []

    # Trying again starts blank, on the lesson's own board, and is graded and kept as any try is.
    box.get_by_role("button", name="Try again").click()
    assert not any(item.is_checked() for item in box.locator("input").all())
    assert box.locator(".feedback-earlier").count() == 0
    _pick(box, right)
    box.get_by_role("button", name="Check answer").click()
    _feedback(box, "Correct.", choice)
    assert [correct for correct, _, _ in _tries(learner, choice)] == [False, True]
    assert web.console_errors == []
