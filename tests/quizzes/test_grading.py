"""The grading rules of each question kind, on the pure functions and through the API."""

from __future__ import annotations

import math

import pytest

from apps.content.text import normalize_text
from apps.quizzes.grading import (
    grade_multiple_choice,
    grade_numeric,
    grade_short_text,
    grade_single_choice,
    text_matches,
)
from apps.quizzes.models import QuizAnswer
from tests.support.quizzes import answer, start

TFRECORD = ["TFRecord"]


@pytest.mark.parametrize(
    "given",
    [
        "TFRecord",
        "tfrecords",
        "TF Record",
        "TF Records",
        " tfrecord ",
        "TF-Record",
        "tf_record",
        "\uff34\uff26\uff32\uff45\uff43\uff4f\uff52\uff44",  # full-width "TFRecord", folded by NFKC
        "TFRecord.",
        "TFRECORD",
        "tfrecrod",  # one swap of neighbours in a long answer
        "tfrecod",  # one letter missing
    ],
)
def test_short_text_matches(given):
    assert grade_short_text(given, TFRECORD).correct


@pytest.mark.parametrize(
    "given",
    [
        "",
        "   ",
        "?!",
        "TF",
        "Record",
        "TFRec",
        "TFRecordDataset",
        "tfrecordss",
        "tfrcrd",  # two letters missing
        "Parquet",
        "JSON",
    ],
)
def test_short_text_does_not_match(given):
    assert not grade_short_text(given, TFRECORD).correct


def test_typos_are_forgiven_only_in_long_answers_and_never_in_digits():
    assert text_matches("interleaev", "interleave")
    assert not text_matches("bacth", "batch")  # too short to guess
    assert not text_matches("patch", "batch")
    assert not text_matches("tf.float64", "tf.float32")
    assert not text_matches("resnet56v2", "resnet50v2")  # one edit, but a digit
    assert text_matches("resnet50 v2", "ResNet50-v2")
    assert not text_matches("profile", "Profiler")  # a shorter word, not a slip
    assert not text_matches("prefetched", "prefetch")


def test_plurals_need_a_real_stem():
    assert text_matches("maps", "map")
    assert text_matches("map", "maps")
    assert not text_matches("as", "a")


def test_normalization_folds_case_width_and_drops_spaces_and_punctuation():
    assert normalize_text("  Straße\tTF-Record_files! ") == "strassetfrecordfiles"
    assert normalize_text("\ufb01le") == "file"  # the ligature is split by NFKC


def test_every_accepted_answer_is_tried():
    assert grade_short_text("parquet", ["TFRecord", "Parquet"]).correct


def test_single_choice():
    assert grade_single_choice("a", {"a"}).credit == 1.0
    assert grade_single_choice("b", {"a"}).credit == 0.0


@pytest.mark.parametrize(
    ("picked", "credit", "outcome"),
    [
        ({"a", "b", "c"}, 1.0, "correct"),
        ({"a", "b"}, 2 / 3, "partial"),
        ({"a"}, 1 / 3, "partial"),
        ({"a", "b", "d"}, 1 / 3, "partial"),
        ({"a", "d"}, 0.0, "wrong"),
        ({"a", "b", "c", "d"}, 2 / 3, "partial"),
        ({"d"}, 0.0, "wrong"),
    ],
)
def test_multiple_choice_partial_credit(picked, credit, outcome):
    grade = grade_multiple_choice(picked, {"a", "b", "c"})
    assert grade.credit == pytest.approx(credit)
    assert grade.outcome == outcome
    assert grade.correct == (outcome == "correct")


@pytest.mark.parametrize(
    ("number", "correct"),
    [(12, True), (12.5, True), (11.5, True), (12.51, False), (11.4, False), (-12, False)],
)
def test_numeric_within_absolute_tolerance(number, correct):
    assert grade_numeric(number, 12, 0.5).correct is correct


def test_numeric_zero_tolerance_absorbs_float_rounding_only():
    assert grade_numeric(0.1 + 0.2, 0.3, 0).correct
    assert not grade_numeric(4816897, 4816896, 0).correct


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_numeric_refuses_what_is_not_a_number(number):
    with pytest.raises(ValueError, match="finite"):
        grade_numeric(number, 12, 0.5)


# --- Through the API: the same rules decide what the server records ---------------------------


@pytest.mark.parametrize(
    ("slug", "fields", "correct", "credit"),
    [
        ("format", {"text": "TFRecord"}, True, 1.0),
        ("format", {"text": "tfrecords"}, True, 1.0),
        ("format", {"text": "TF Record"}, True, 1.0),
        ("format", {"text": "TF"}, False, 0.0),
        ("format", {"text": "CSV"}, False, 0.0),
        ("batches", {"number": 32}, True, 1.0),
        ("batches", {"number": 32.0}, True, 1.0),
        ("batches", {"number": 33}, False, 0.0),
        ("overlap", {"choice": "a"}, True, 1.0),
        ("overlap", {"choice": "b"}, False, 0.0),
        ("pitfalls", {"choices": ["b", "a"]}, True, 1.0),
        ("pitfalls", {"choices": ["a"]}, False, 0.5),
        ("pitfalls", {"choices": ["a", "c"]}, False, 0.0),
    ],
)
def test_the_server_grades_each_kind(learner_client, course, slug, fields, correct, credit):
    attempt_id = start(learner_client).json()["id"]
    response = answer(learner_client, attempt_id, slug, **fields)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["correct"], body["credit"]) == (correct, pytest.approx(credit))
    stored = QuizAnswer.objects.get(attempt_id=attempt_id)
    assert (stored.correct, stored.credit) == (correct, pytest.approx(credit))
