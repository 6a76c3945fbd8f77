"""Import an Anki package (.apkg, .colpkg) or a CSV/TSV table into a deck of a course."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.common.errors import DomainError
from apps.content.models import Course, Lesson
from apps.interchange.services import ImportSource, deck_import


class Command(BaseCommand):
    help = (
        "Import an Anki package or a CSV/TSV file into a deck (created if new). Notes are matched by GUID and "
        "rows by slug: importing again updates, never duplicates, and archives cards the file no longer holds."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="A .apkg, .colpkg, .csv, .tsv or .txt file.")
        parser.add_argument("--course", required=True, help="Slug of the course.")
        parser.add_argument("--lesson", required=True, help="Slug of the course's lesson that holds the deck.")
        parser.add_argument("--deck", required=True, help="Slug of the deck (existing, or new).")
        parser.add_argument("--title", help="Deck title (default: the Anki deck's name or the file's name).")
        parser.add_argument("--dry-run", action="store_true", help="Report what would change; write nothing.")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"No such file: {path}")
        course = Course.objects.filter(slug=options["course"]).first()
        if course is None:
            raise CommandError(f"No course {options['course']!r}.")
        lesson = Lesson.objects.filter(slug=options["lesson"], course=course).first()
        if lesson is None:
            raise CommandError(f"Course {course.slug!r} has no lesson {options['lesson']!r}.")
        try:
            with path.open("rb") as file:
                report = deck_import(
                    course=course,
                    lesson=lesson,
                    deck_slug=options["deck"],
                    deck_title=options["title"],
                    source=ImportSource(name=path.name, file=file),
                    dry_run=options["dry_run"],
                )
        except DomainError as exc:
            raise CommandError(f"{exc.message} Nothing was written.") from exc
        for line in report.lines():
            self.stdout.write(line)
