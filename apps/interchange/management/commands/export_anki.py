"""Write decks out as one Anki package (.apkg) that Anki imports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.content.models import Deck
from apps.interchange.anki_export import decks_anki_package


class Command(BaseCommand):
    help = "Export decks to an Anki package: one note per live card, each deck an Anki deck named Course::Deck."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--deck", action="append", required=True, help="Deck slug (repeatable).")
        parser.add_argument("-o", "--output", type=Path, required=True, help="The .apkg file to write.")

    def handle(self, *args: Any, **options: Any) -> None:
        slugs: list[str] = options["deck"]
        decks = list(Deck.objects.filter(slug__in=slugs))
        unknown = set(slugs) - {deck.slug for deck in decks}
        if unknown:
            raise CommandError(f"No such deck: {', '.join(sorted(unknown))}")
        output: Path = options["output"]
        output.write_bytes(decks_anki_package(decks=decks))
        self.stdout.write(f"wrote {output}")
