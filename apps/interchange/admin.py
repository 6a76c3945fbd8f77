"""The content admin's deck pages, with Anki: importing a package into a deck, and exporting decks as packages."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path

from apps.content.admin import DeckAdmin
from apps.content.models import Deck
from apps.interchange.admin_views import deck_import_view
from apps.interchange.anki_export_admin import anki_package_export


class DeckWithAnkiAdmin(DeckAdmin):
    actions = [*DeckAdmin.actions, anki_package_export]

    def get_urls(self) -> list[URLPattern]:
        # Before the default URLs, whose "<object_id>/" pattern would otherwise match "import-anki/".
        return [
            path(
                "import-anki/",
                self.admin_site.admin_view(self.import_anki_view),
                name=f"{self.opts.app_label}_{self.opts.model_name}_import_anki",
            ),
            *super().get_urls(),
        ]

    def import_anki_view(self, request: HttpRequest) -> HttpResponse:
        return deck_import_view(self, request)


admin.site.unregister(Deck)
admin.site.register(Deck, DeckWithAnkiAdmin)
