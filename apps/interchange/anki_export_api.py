"""A learner's download of a deck as an Anki package."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.views import APIView

from apps.content.selectors import deck_get
from apps.interchange.anki_export import anki_package_filename, decks_anki_package

APKG_CONTENT_TYPE = "application/octet-stream"


class DeckAnkiPackageView(APIView):
    @extend_schema(
        summary="A deck as an Anki package (.apkg) to import into Anki",
        description=(
            'One note per card, on the note type "Quizsite card" (fields Term, Definition, Example, Code) in the '
            'Anki deck "Course::Deck". Each note keeps its GUID from one download to the next, so importing a '
            "newer download updates the notes instead of adding copies. Sent as an attachment."
        ),
        responses={
            (200, APKG_CONTENT_TYPE): OpenApiResponse(OpenApiTypes.BINARY, description="The .apkg file."),
        },
    )
    def get(self, request: Request, slug: str) -> HttpResponse:
        deck = deck_get(slug=slug)
        return HttpResponse(
            decks_anki_package(decks=[deck]),
            content_type=APKG_CONTENT_TYPE,
            headers={"Content-Disposition": f'attachment; filename="{anki_package_filename(decks=[deck])}"'},
        )
