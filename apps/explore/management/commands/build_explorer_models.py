"""Write each explorer scene's 3D model (glTF binary) from the regions in the course files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.content.content_files.source import ContentFilesInvalid
from apps.explore.scene_model_files import REBUILD_COMMAND, scene_model_files_plan, scene_model_files_stale


class Command(BaseCommand):
    help = (
        "Build the explorer scenes' models from decks/ (one named node per region) into the explore app's "
        "static folder. Same files in, same bytes out."
    )
    # Reads course files and writes static files only: neither the URLs nor the database are involved.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="*", type=Path, help="Course files or folders (default: decks/).")
        parser.add_argument(
            "--check", action="store_true", help="Write nothing; fail when a model is missing or out of date."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        paths: list[Path] = options["paths"] or [Path(settings.BASE_DIR) / "decks"]
        missing = [str(path) for path in paths if not path.exists()]
        if missing:
            raise CommandError(f"No such file or folder: {', '.join(missing)}")
        try:
            files = scene_model_files_plan(paths=paths)
        except ContentFilesInvalid as exc:
            for error in exc.errors:
                self.stderr.write(str(error))
            raise CommandError(f"{len(exc.errors)} error(s); no model was written.") from exc

        stale = scene_model_files_stale(files=files)
        if options["check"]:
            if stale:
                names = ", ".join(f"{_shown(file.path)} (scene {file.scene})" for file in stale)
                raise CommandError(f"Out of date: {names}. Run `{REBUILD_COMMAND}` and commit the result.")
            self.stdout.write(self.style.SUCCESS(f"{len(files)} scene model(s) up to date."))
            return
        for file in stale:
            file.path.parent.mkdir(parents=True, exist_ok=True)
            file.path.write_bytes(file.content)
            self.stdout.write(f"wrote {_shown(file.path)}: {len(file.regions)} regions")
        self.stdout.write(
            self.style.SUCCESS(
                f"{len(files)} scene model(s): {len(stale)} written, {len(files) - len(stale)} unchanged."
            )
        )


def _shown(path: Path) -> str:
    """The path relative to the project when it is inside it, as a developer would type it."""
    base = Path(settings.BASE_DIR)
    return str(path.relative_to(base)) if path.is_relative_to(base) else str(path)
