"""Content as response bodies, mapped by hand where a list is read on every visit.

Each mapper is what its serializer renders (the serializer delegates to it, so the two cannot
differ); the serializer stays the response's schema. Building a DRF serializer for a page of rows
costs far more than reading the rows.
"""

from __future__ import annotations

from typing import Any

from apps.content.models import Course


def course_summary_data(course: Course) -> dict[str, Any]:
    return {"slug": course.slug, "title": course.title, "subject": course.subject, "description": course.description}
