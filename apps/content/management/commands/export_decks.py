"""Write courses from the database as course files that load back to the identical content."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.content.content_files.export import course_doc_build, course_doc_to_yaml
from apps.content.models import Course


class Command(BaseCommand):
    help = "Export courses to YAML course files, one <course-slug>.yaml per course."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", type=Path, default=None, help="Folder to write to (default: decks/).")
        parser.add_argument("--course", action="append", default=[], help="Course slug (repeatable; default: all).")

    def handle(self, *args: Any, **options: Any) -> None:
        output: Path = options["output"] or Path(settings.BASE_DIR) / "decks"
        courses = Course.objects.order_by("slug")
        if options["course"]:
            courses = courses.filter(slug__in=options["course"])
            unknown = set(options["course"]) - set(courses.values_list("slug", flat=True))
            if unknown:
                raise CommandError(f"No such course: {', '.join(sorted(unknown))}")
        output.mkdir(parents=True, exist_ok=True)
        for course in courses:
            path = output / f"{course.slug}.yaml"
            path.write_text(course_doc_to_yaml(course_doc_build(course=course)), encoding="utf-8")
            self.stdout.write(f"wrote {path}")
