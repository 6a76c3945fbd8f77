"""Print the API's route table, or write it into docs/api.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from apps.common.routes import api_route_table, route_block_write


class Command(BaseCommand):
    help = "Print every API path and method with its summary, as the Markdown table in docs/api.md."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--write", action="store_true", help="Replace the table in docs/api.md.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["write"]:
            page = Path(settings.BASE_DIR) / "docs" / "api.md"
            changed = route_block_write(page)
            self.stdout.write(f"{page}: {'updated' if changed else 'already current'}")
        else:
            self.stdout.write(api_route_table(), ending="")
