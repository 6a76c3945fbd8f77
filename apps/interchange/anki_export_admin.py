"""The Deck changelist's "Export as Anki package" action."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from apps.content.models import Deck
from apps.interchange.anki_export import anki_package_filename, decks_anki_package


@admin.action(description="Export as Anki package")
def anki_package_export(
    modeladmin: admin.ModelAdmin[Deck], request: HttpRequest, queryset: QuerySet[Deck]
) -> HttpResponse:
    """One download whatever the number of decks chosen: each is an Anki deck under its course's ("Course::Deck")."""
    decks = list(queryset.order_by("slug"))
    return HttpResponse(
        decks_anki_package(decks=decks),
        content_type="application/octet-stream",
        headers={"Content-Disposition": f'attachment; filename="{anki_package_filename(decks=decks)}"'},
    )
