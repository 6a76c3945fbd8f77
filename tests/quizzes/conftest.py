"""Fixtures for quiz tests: a small course with a quiz of every kind."""

from __future__ import annotations

import pytest

from apps.content.content_files.load import content_sources_load
from apps.content.content_files.source import ContentSource
from tests.support.course_files import minimal_course, to_yaml


@pytest.fixture
def course(db) -> None:
    content_sources_load(sources=[ContentSource("course.yaml", to_yaml(minimal_course()))])
