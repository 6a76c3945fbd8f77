"""Small course documents for loader tests, built as dicts and written as YAML."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from django.apps import apps
from django.db import models

from apps.content.models import (
    AcceptedAnswer,
    Card,
    Choice,
    Concept,
    ConceptLink,
    Course,
    Deck,
    ExplorerRegion,
    ExplorerScene,
    Lesson,
    LessonBlock,
    LessonSection,
    PipelineExercise,
    Question,
    Quiz,
    QuizQuestion,
)

# Every content model, referenced before referencing; reversed, an order in which rows can be deleted.
CONTENT_MODELS: list[type[models.Model]] = [
    Course,
    Lesson,
    Deck,
    Card,
    Question,
    Choice,
    AcceptedAnswer,
    Quiz,
    QuizQuestion,
    PipelineExercise,
    LessonSection,
    LessonBlock,
    Concept,
    ConceptLink,
    ExplorerScene,
    ExplorerRegion,
]

MINIMAL_COURSE: dict[str, Any] = {
    "version": 1,
    "slug": "pipelines-101",
    "title": "Pipelines 101",
    "lessons": [
        {
            "slug": "first-pipeline",
            "title": "A first pipeline",
            "sections": [
                {
                    "slug": "primitives",
                    "title": "Primitives",
                    "blocks": [
                        {"kind": "prose", "text": "Input pipelines feed the accelerator."},
                        {
                            "kind": "terms",
                            "items": [{"term": "map", "definition": "Transform elements", "card": "basics/map"}],
                        },
                        {"kind": "question", "question": "overlap"},
                    ],
                }
            ],
            "decks": [
                {
                    "slug": "basics",
                    "title": "Basics",
                    "cards": [
                        {"slug": "map", "term": "map", "definition": "Transform elements"},
                        {"slug": "batch", "term": "batch", "definition": "Stack samples into fixed-size groups"},
                        {"slug": "prefetch", "term": "prefetch", "definition": "Overlap input and compute"},
                    ],
                }
            ],
            "questions": [
                {
                    "slug": "overlap",
                    "kind": "single_choice",
                    "prompt": "Which transformation overlaps input work with training?",
                    "explanation": "prefetch prepares the next batch while the current one trains.",
                    "choices": [
                        {"key": "a", "text": "prefetch", "correct": True},
                        {"key": "b", "text": "cache"},
                    ],
                    "cards": ["basics/prefetch"],
                },
                {
                    "slug": "format",
                    "kind": "short_text",
                    "prompt": "Name a serialized training data format.",
                    "explanation": "TFRecord is TensorFlow's own record format.",
                    "accepted_answers": ["TFRecord", "Parquet"],
                },
                {
                    "slug": "batches",
                    "kind": "numeric",
                    "prompt": "How many batches of 32 are in 1,024 examples?",
                    "explanation": "1024 / 32 = 32.",
                    "answer": 32,
                    "tolerance": 0,
                },
                {
                    "slug": "pitfalls",
                    "kind": "multiple_choice",
                    "prompt": "Which are pitfalls?",
                    "explanation": "Both slow the pipeline.",
                    "choices": [
                        {"key": "a", "text": "Forgetting prefetch", "correct": True},
                        {"key": "b", "text": "Python threads", "correct": True},
                        {"key": "c", "text": "Using tf.data"},
                    ],
                    "cards": ["basics/map", "basics/prefetch"],
                },
            ],
            "quizzes": [
                {
                    "slug": "first-quiz",
                    "title": "First quiz",
                    "description": "Every kind of question.",
                    "questions": ["overlap", "format", "batches", "pitfalls"],
                },
                {"slug": "short-quiz", "title": "Short quiz", "questions": ["batches", "overlap"]},
            ],
            "exercises": [
                {
                    "slug": "first-exercise",
                    "title": "Batch and prefetch",
                    "prompt": "Build the pipeline.",
                    "entry_point": "build_pipeline",
                    "starter_code": "def build_pipeline(files):\n    ...\n",
                    "spec": {"references": {"expert": "SECRET-REFERENCE-SOLUTION"}},
                    "concepts": ["overlap"],
                }
            ],
        }
    ],
    "concepts": [
        {
            "slug": "transformations",
            "name": "Transformations",
            "definition": "Ops on datasets.",
            "cards": ["basics/map", "basics/batch"],
        },
        {
            "slug": "overlap",
            "name": "Overlap",
            "definition": "Input work during compute.",
            "cards": ["basics/prefetch"],
        },
    ],
    "links": [{"source": "transformations", "target": "overlap", "kind": "enables"}],
    "scenes": [
        {
            "slug": "pipeline-scene",
            "title": "Pipeline",
            "model_asset": "models/pipeline.glb",
            "regions": [
                {
                    "slug": "buffer",
                    "title": "Prefetch buffer",
                    "description": "Holds ready batches.",
                    "cards": ["basics/prefetch"],
                }
            ],
        }
    ],
}


def minimal_course() -> dict[str, Any]:
    return copy.deepcopy(MINIMAL_COURSE)


def to_yaml(document: dict[str, Any]) -> str:
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)


def write_course(folder: Path, document: dict[str, Any], name: str | None = None) -> Path:
    path = folder / (name or f"{document['slug']}.yaml")
    path.write_text(to_yaml(document), encoding="utf-8")
    return path


def content_rows() -> dict[str, list[dict[str, Any]]]:
    """Every row of every content table, many-to-many tables included, as stored."""
    return {
        model._meta.label: list(model._default_manager.order_by("pk").values())
        for model in apps.get_app_config("content").get_models(include_auto_created=True)
    }
