"""What the shipped course teaches: answers graded fairly, questions that stand alone, honest prompts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from apps.quizzes.grading import grade_short_text
from tests.support.paths import DECKS_DIR

COURSE_FILE = DECKS_DIR / "tensorflow-ai-phd.yaml"
HARNESS = Path(__file__).resolve().parents[2] / "worker" / "harness.py"


def course() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(COURSE_FILE.read_text())
    return document


def lesson() -> dict[str, Any]:
    (only,) = course()["lessons"]
    return dict(only)


def question(slug: str) -> dict[str, Any]:
    return next(q for q in lesson()["questions"] if q["slug"] == slug)


# (question, answer, graded correct): right answers a learner writes, and near misses that are wrong.
SHORT_ANSWERS = [
    ("serialized-training-format", "TFRecord", True),
    ("serialized-training-format", "tfrecords", True),
    ("serialized-training-format", "tf.Example", True),
    ("serialized-training-format", "tf.train.Example", True),
    ("serialized-training-format", "TFRecordDataset", True),
    ("serialized-training-format", "Apache Parquet", True),
    ("serialized-training-format", "CSV", False),
    ("serialized-training-format", "JPEG", False),
    ("many-files-transformation", "interleave", True),
    ("many-files-transformation", "Interleaving", True),
    ("many-files-transformation", "tf.data.Dataset.interleave", True),
    ("many-files-transformation", "TFRecordDataset", True),
    ("many-files-transformation", "map", False),
    ("many-files-transformation", "shuffle", False),
    ("many-files-transformation", "prefetch", False),
    ("pipeline-profiling-tool", "TensorFlow Profiler", True),
    ("pipeline-profiling-tool", "Profiler", True),
    ("pipeline-profiling-tool", "TensorBoard", True),
    ("pipeline-profiling-tool", "input pipeline analysis", True),
    ("pipeline-profiling-tool", "Input pipeline analyzer", True),
    ("pipeline-profiling-tool", "nvidia-smi", False),
    ("pipeline-profiling-tool", "timeit", False),
    ("pipeline-profiling-tool", "profile", False),
    ("generator-signature-argument", "output_signature", True),
    ("generator-signature-argument", "output signature", True),
    ("generator-signature-argument", "output_types", False),
    ("generator-signature-argument", "output_shapes", False),
]


@pytest.mark.parametrize(("slug", "answer", "correct"), SHORT_ANSWERS)
def test_short_answers_are_graded_fairly(slug: str, answer: str, correct: bool) -> None:
    assert grade_short_text(answer, question(slug)["accepted_answers"]).correct is correct


def test_every_short_text_question_is_covered_above() -> None:
    short_text = {q["slug"] for q in lesson()["questions"] if q["kind"] == "short_text" and not q.get("archived")}
    assert short_text == {getattr(case, "values", case)[0] for case in SHORT_ANSWERS}


# Quizzes shuffle their questions and a question is also shown on its own: none may lean on another.
CONTEXT_WORDS = re.compile(
    r"\b(above|below|previous|preceding|earlier|same batch|that same|this section|the section|last question)\b", re.I
)


def test_every_question_stands_alone() -> None:
    leaning = [
        (q["slug"], text)
        for q in lesson()["questions"]
        for text in [q["prompt"], *(choice["text"] for choice in q.get("choices", []))]
        if CONTEXT_WORDS.search(text) and "previous worker" not in text
    ]
    assert leaning == []


def test_every_exercise_prompt_names_the_options_the_grader_turns_off() -> None:
    turned_off = re.findall(r"experimental_optimization\.(\w+) = False", HARNESS.read_text())
    assert len(turned_off) >= 4
    missing = {
        exercise["slug"]: [name for name in turned_off if name not in exercise["prompt"]]
        for exercise in lesson()["exercises"]
    }
    assert all(names == [] for names in missing.values()), missing


def test_an_exercise_that_checks_a_resize_says_how_to_resize() -> None:
    checked = [exercise for exercise in lesson()["exercises"] if exercise["spec"].get("rules", {}).get("resize")]
    assert checked
    for exercise in checked:
        resize = exercise["spec"]["rules"]["resize"]
        assert f'method="{resize["method"]}"' in exercise["prompt"]
        assert f"antialias={resize['antialias']!s}" in exercise["prompt"]
        assert f"antialias={resize['antialias']!s}" in exercise["starter_code"]


def test_the_explorer_scene_caches_before_it_shuffles() -> None:
    (scene,) = course()["scenes"]
    order = [region["slug"] for region in scene["regions"]]
    assert order.index("parse-decode-map") < order.index("cache") < order.index("shuffle-buffer") < order.index("batch")


def test_only_out_of_order_output_contrasts_with_reproducibility() -> None:
    contrasts = {
        link["source"]
        for link in course()["links"]
        if link["kind"] == "contrasts" and link["target"] == "reproducibility"
    }
    assert contrasts == {"nondeterministic-order"}
