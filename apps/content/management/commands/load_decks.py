"""Load course files from decks/ (or the given files and folders) into the database."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.content.content_files.load import content_sources_load, content_sources_read
from apps.content.content_files.source import ContentFilesInvalid

# Below this many rows a load takes about a second and progress lines are noise.
PROGRESS_MIN_ROWS = 1000
# Items listed per kind at the default verbosity: enough to check a small edit, not a screenful per 10,000 cards.
LISTED_ITEMS_PER_KIND = 20


class Command(BaseCommand):
    help = "Validate course YAML files, then load them in one transaction (upsert by slug)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="*", type=Path, help="Files or folders (default: decks/).")
        parser.add_argument("--dry-run", action="store_true", help="Validate and report; write nothing.")

    def handle(self, *args: Any, **options: Any) -> None:
        paths: list[Path] = options["paths"] or [Path(settings.BASE_DIR) / "decks"]
        missing = [str(path) for path in paths if not path.exists()]
        if missing:
            raise CommandError(f"No such file or folder: {', '.join(missing)}")
        started = time.monotonic()
        last_report = [0.0]

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if total >= PROGRESS_MIN_ROWS and (now - last_report[0] >= 1 or done == total):
                last_report[0] = now
                self.stderr.write(f"loading: {done}/{total} items ({100 * done // total}%)")

        try:
            sources = content_sources_read(paths)
            if not sources:
                raise CommandError(f"No .yaml files found in {', '.join(map(str, paths))}")
            report = content_sources_load(sources=sources, progress=progress, dry_run=options["dry_run"])
        except ContentFilesInvalid as exc:
            for error in exc.errors:
                self.stderr.write(str(error))
            raise CommandError(f"{len(exc.errors)} error(s); nothing was loaded.") from exc

        verbosity: int = options["verbosity"]
        if verbosity == 0:
            return
        limit = None if verbosity >= 2 else LISTED_ITEMS_PER_KIND
        for line in report.item_lines(limit=limit):
            self.stdout.write(line)
        if limit is not None and any(group.more for group in report.groups(limit=limit)):
            self.stdout.write("(run with -v 2 to list every item)")
        verb = "would change" if options["dry_run"] else "loaded"
        summary = "no changes" if not report.changed else verb
        self.stdout.write(
            self.style.SUCCESS(
                f"{len(sources)} file(s), courses {', '.join(report.courses)}: {summary} "
                f"in {time.monotonic() - started:.1f} s"
            )
        )
