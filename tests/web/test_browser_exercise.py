"""A pipeline exercise in real Chromium: code written in the editor, graded by a real Celery worker in its
sandbox, followed live and shown; what the page shows is what the database holds."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest

from apps.content.models import PipelineExercise
from apps.exercises.models import Submission, SubmissionStatus
from tests.support.browser import DESKTOP, PHONE, Browsing, Viewport
from tests.support.grading import SIMULATOR, reference, requires_sandbox

if TYPE_CHECKING:
    from playwright.sync_api import Locator

pytestmark = pytest.mark.django_db(transaction=True)

PAGE = f"/exercises/{SIMULATOR.slug}"
# Rejected before it runs (no threads of one's own), so it is graded in moments, with a lint finding.
THREADED = """import threading

import tensorflow as tf


def build_pipeline(make_source):
    return tf.data.Dataset.from_generator(make_source).batch(16)
"""
THREADING_LINE = 1


def code_box(web: Browsing) -> Locator:
    return web.page.get_by_role("textbox", name="Your code")


def editor_text(web: Browsing) -> str:
    """The editor's lines as drawn (all of them: the codes here are shorter than the viewport)."""
    return "\n".join(web.page.locator(".cm-content .cm-line").all_text_contents())


def replace_code(web: Browsing, code: str) -> None:
    """Selects everything in the editor and types the code in one input, as a paste would."""
    box = code_box(web)
    box.click()
    web.page.keyboard.press("ControlOrMeta+a")
    web.page.keyboard.insert_text(code)
    assert editor_text(web) == code


def at_size(web: Browsing, viewport: Viewport) -> None:
    web.viewport = viewport
    web.page.set_viewport_size({"width": viewport.width, "height": viewport.height})


def screenshots_at_both_sizes(web: Browsing, name: str) -> None:
    for size in (PHONE, DESKTOP):
        at_size(web, size)
        assert web.scroll_width() <= size.width, name
        web.screenshot(name)


@requires_sandbox
@pytest.mark.integration
@pytest.mark.grader
def test_the_expert_pipeline_is_graded_live_and_a_lint_finding_marks_its_line(
    desktop: Browsing, shipped_course: None, learner: Any, token: str, grading_worker: Any
) -> None:
    web = desktop
    web.sign_in_with_token(token)
    web.goto(PAGE)
    title = PipelineExercise.objects.get(slug=SIMULATOR.slug).title
    web.page.get_by_role("heading", name=title, exact=True).wait_for()
    code_box(web).wait_for()
    assert "raise NotImplementedError" in editor_text(web)
    screenshots_at_both_sizes(web, "exercise-editor")
    assert web.axe_serious() == []

    expert = reference(SIMULATOR, "expert")
    replace_code(web, expert)
    web.page.keyboard.press("ControlOrMeta+Enter")
    # Live progress: the phases while the worker grades.
    web.page.locator(".grading-progress").wait_for()
    web.page.locator(".grading-status").filter(has_text=re.compile("Checking|Timing")).wait_for(timeout=90_000)
    # Submitting brings the progress into view, and it says where it is: "Timing round 1 of 3: ... step 2 of 9".
    in_view = "el => { const box = el.getBoundingClientRect(); return box.top >= 0 && box.bottom <= innerHeight; }"
    assert web.page.locator(".grading-progress").evaluate(in_view)
    web.page.locator(".grading-detail").filter(has_text=re.compile(r"step \d+ of \d+")).wait_for(timeout=90_000)
    screenshots_at_both_sizes(web, "exercise-grading")
    result = web.page.locator(".exercise-result")
    result.wait_for(timeout=120_000)

    submission = Submission.objects.get(learner=learner)
    assert submission.code == expert
    assert submission.status == SubmissionStatus.DONE and submission.verdict == "accepted", submission.error_message
    assert submission.result is not None
    grading = submission.result
    assert result.locator(".result-verdict").inner_text() == "Accepted"
    shown_score = result.locator("[data-score]").inner_text()
    assert shown_score == f"{round(grading['score']['total'], 1):g} / {round(grading['score']['max'], 1):g}"
    score = grading["score"]
    points = result.locator(".result-summary .meta").inner_text()
    assert points == (
        f"Points: correctness {score['correctness']:g} of {score['correctness_max']:g},"
        f" speed {score['speed']:g} of {score['speed_max']:g}"
    )
    speed_line = result.locator("#timing-heading + p").inner_text()
    assert "naive reference" in speed_line and "slower" not in speed_line, speed_line
    checks = result.locator(".result-checks li")
    assert checks.count() == len(grading["checks"]) > 0
    for check in grading["checks"]:
        row = checks.filter(has_text=check["name"]).first
        assert ("passed" if check["passed"] else "failed") in row.inner_text()
    # The three pipelines' epoch times, as bars with their numbers.
    assert result.locator(".timing-table tbody tr").count() == 3
    assert result.locator(".timing-submission .timing-seconds").inner_text().endswith("s")
    assert result.locator(".timing-submission .timing-bar").evaluate("bar => bar.getBoundingClientRect().width") > 0
    # Where the time goes: a bar per stage of the learner's pipeline, the slowest marked, the verdict and advice.
    profile = grading["profile"]
    stages = result.locator(".stage-table tbody tr")
    assert stages.count() == len(profile["stages"]) > 1
    shown_kinds = [stages.nth(index).get_attribute("data-stage") for index in range(stages.count())]
    assert shown_kinds == [stage["kind"] for stage in profile["stages"]]
    slowest = next(stage for stage in profile["stages"] if stage["path"] == profile["slowest"])
    flagged = result.locator(".stage-slowest")
    assert flagged.count() == 1 and flagged.get_attribute("data-stage") == slowest["kind"]
    assert "slowest" in flagged.inner_text()
    assert f"{round(slowest['share'] * 100)} %" in flagged.locator(".stage-share").inner_text()
    assert flagged.locator(".stage-bar").evaluate("bar => bar.getBoundingClientRect().width") > 0
    assert result.locator("[data-profile-advice]").inner_text() == profile["advice"]
    verdicts = {"not": "Not input-bound", "moderately": "Moderately input-bound", "highly": "Highly input-bound"}
    assert result.locator("[data-input-bound]").inner_text().startswith(verdicts[profile["input_bound"]["verdict"]])
    assert web.page.get_by_role("button", name=f"Submission {submission.pk}").count() == 1
    screenshots_at_both_sizes(web, "exercise-result")
    assert web.axe_serious() == []

    replace_code(web, THREADED)
    web.page.get_by_role("button", name="Submit for grading").click()
    result.locator(".lint-list").wait_for(timeout=60_000)
    threaded = Submission.objects.exclude(pk=submission.pk).get(learner=learner)
    assert threaded.status == SubmissionStatus.DONE and threaded.verdict == "rejected"
    assert threaded.result is not None
    lines = sorted({finding["line"] for finding in threaded.result["lint"]})
    assert THREADING_LINE in lines
    listed = result.locator(".lint-list li")
    assert listed.count() == len(threaded.result["lint"])
    assert f"Line {THREADING_LINE}" in listed.first.inner_text()
    # The finding is marked in the editor's gutter beside its line.
    markers = web.page.locator(".cm-gutter-lint .cm-gutterElement:has(.cm-lint-marker)")
    markers.first.wait_for()
    assert markers.count() == len(lines)
    line_box = web.page.locator(".cm-line").nth(THREADING_LINE - 1).bounding_box()
    marker_box = markers.first.bounding_box()
    assert line_box is not None and marker_box is not None
    assert abs(marker_box["y"] - line_box["y"]) < line_box["height"]
    web.screenshot("exercise-lint")
    assert web.axe_serious() == []
    assert web.console_errors == []


def test_the_draft_survives_a_reload_and_the_keyboard_leaves_the_editor(
    phone: Browsing, shipped_course: None, learner: Any, token: str
) -> None:
    web = phone
    web.sign_in_with_token(token)
    web.goto(PAGE)
    code_box(web).wait_for()
    starter = editor_text(web)
    replace_code(web, "def build_pipeline(make_source):\n    return None\n")
    web.page.reload()
    code_box(web).wait_for()
    assert editor_text(web) == "def build_pipeline(make_source):\n    return None\n"
    # Tab indents inside the editor; Escape then Tab moves on to the page's next control.
    code_box(web).click()
    web.page.keyboard.press("ControlOrMeta+End")
    web.page.keyboard.press("Tab")
    assert editor_text(web).endswith("\n    ")
    web.page.keyboard.press("Escape")
    web.page.keyboard.press("Tab")
    focused = web.page.evaluate("document.activeElement && document.activeElement.textContent")
    assert focused == "Submit for grading"
    web.page.keyboard.press("Tab")
    web.page.keyboard.press("Enter")
    assert web.page.get_by_role("button", name="Reset to starter code").count() == 1
    assert editor_text(web) == starter
    web.page.reload()
    code_box(web).wait_for()
    assert editor_text(web) == starter
    assert web.page.get_by_text("Nothing submitted yet").count() == 1
    assert not Submission.objects.filter(learner=learner).exists()
    assert web.scroll_width() <= web.viewport.width
    assert web.axe_serious() == []
    assert web.console_errors == []


def test_the_lesson_lists_every_exercise_of_the_course_and_each_opens(
    desktop: Browsing, shipped_course: None, token: str
) -> None:
    web = desktop
    web.sign_in_with_token(token)
    web.goto("/lessons/data-pipelines-tf-data")
    links = web.page.get_by_role("link", name=re.compile(r"^Exercise: "))
    links.first.wait_for()
    shipped = list(PipelineExercise.objects.order_by("position").values_list("slug", "title"))
    assert len(shipped) == 8
    assert links.all_inner_texts() == [f"Exercise: {title}" for _, title in shipped]
    for slug, title in shipped[4:]:
        web.goto(f"/exercises/{slug}")
        web.page.get_by_role("heading", level=1, name=title).wait_for()
        assert web.page.get_by_role("region", name="What it practises").count() == 1
    assert web.console_errors == []


def test_an_exercise_names_what_it_practises_and_leads_to_the_cards(
    phone: Browsing, shipped_course: None, token: str
) -> None:
    web = phone
    web.sign_in_with_token(token)
    web.goto("/exercises/records-that-do-not-parse")
    section = web.page.get_by_role("region", name="What it practises")
    section.wait_for()
    items = section.get_by_role("listitem").all_inner_texts()
    assert items[:3] == [
        "Parallel preprocessing: " + items[0].split(": ", 1)[1],
        "Scalable serialized formats: TFRecord, tf.train.Example, Parquet",
        "Record parsing and schemas: tf.train.Example, Deterministic parsing schema",
    ]
    link = section.get_by_role("link", name="Review these cards in their deck")
    assert link.count() == 1
    link.click()
    web.page.wait_for_url("**/decks/tf-data-pipelines/study")
    web.goto("/exercises/records-that-do-not-parse")
    section.wait_for()
    assert web.scroll_width() <= web.viewport.width
    assert web.axe_serious() == []
    assert web.console_errors == []


def test_an_unknown_exercise_is_said_in_words(desktop: Browsing, token: str) -> None:
    desktop.sign_in_with_token(token)
    desktop.goto("/exercises/no-such-exercise")
    alert = desktop.page.get_by_role("alert").first
    alert.wait_for()
    assert "not found" in alert.inner_text().lower()
    body = desktop.page.locator("body").inner_text()
    assert '{"error"' not in body
