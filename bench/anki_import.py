"""Deck import at scale: a 10,000-note Anki package read, dry-run, imported, and imported again unchanged.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizsite_bench python -m bench.anki_import [NOTES]
It creates (and afterwards drops) a test database and a temporary media folder, so it never touches real data.
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.test_settings")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402


def main(notes: int) -> None:
    from apps.content.content_files.load import content_sources_load
    from apps.content.content_files.source import ContentSource
    from apps.content.models import Course, Lesson
    from apps.interchange.anki_package import anki_package_read
    from apps.interchange.services import ImportSource, deck_import
    from tests.support.anki_packages import large_package
    from tests.support.course_files import minimal_course, to_yaml

    content_sources_load(sources=[ContentSource("course.yaml", to_yaml(minimal_course()))])
    course = Course.objects.get(slug="pipelines-101")
    lesson = Lesson.objects.get(slug="first-pipeline")

    started = time.perf_counter()
    package = large_package(notes)
    print(
        f"database: {connection.vendor}; package: {len(package) / 1e6:.1f} MB, {notes} notes, built in "
        f"{time.perf_counter() - started:.2f} s"
    )

    started = time.perf_counter()
    anki_package_read(io.BytesIO(package))
    print(f"{'read package only':>24}: {time.perf_counter() - started:6.2f} s")

    def timed(label: str, *, dry_run: bool) -> None:
        started = time.perf_counter()
        report = deck_import(
            course=course,
            lesson=lesson,
            deck_slug="bulk",
            deck_title="Bulk",
            source=ImportSource(name="bulk.apkg", file=io.BytesIO(package)),
            dry_run=dry_run,
        )
        print(f"{label:>24}: {time.perf_counter() - started:6.2f} s   (cards: {report.cards.text(dry_run=dry_run)})")

    timed("dry run", dry_run=True)
    timed("import", dry_run=False)
    timed("re-import, no change", dry_run=False)
    timed("dry run, no change", dry_run=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notes", nargs="?", type=int, default=10_000, help="notes in the package (default 10,000)")
    count = parser.parse_args().notes
    old_config = setup_databases(verbosity=0, interactive=False)
    try:
        with tempfile.TemporaryDirectory() as media_root:
            settings.MEDIA_ROOT = media_root
            main(count)
    finally:
        teardown_databases(old_config, verbosity=0)
