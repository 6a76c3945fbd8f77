"""Admin previews of content as a learner sees it: a card here; a question's, where trying an answer grades it, in
apps.quizzes.admin_previews."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path
from django.utils.safestring import mark_safe

from apps.content.card_markup import card_html_clean
from apps.content.models import Card, CardFormat, Question
from apps.content.serializers import CardOutput


def hidden_from_learners(obj: Card | Question) -> str:
    """Why learners do not see this card or question ("its deck is archived"), or "" when they do."""
    if isinstance(obj, Card):
        chain: list[tuple[str, Any]] = [("card", obj), ("deck", obj.deck), ("lesson", obj.deck.lesson)]
        chain.append(("course", obj.deck.lesson.course))
    else:
        chain = [("question", obj), ("lesson", obj.lesson), ("course", obj.lesson.course)]
    for index, (name, item) in enumerate(chain):
        if item.archived:
            return f"this {name} is archived" if index == 0 else f"its {name} is archived"
    return ""


def preview_context(model_admin: admin.ModelAdmin, request: HttpRequest, obj: Card | Question) -> dict[str, Any]:
    if not model_admin.has_view_permission(request, obj):
        raise PermissionDenied
    return {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "original": obj,
        "title": f"Preview: {obj}",
        "hidden_because": hidden_from_learners(obj),
    }


def card_preview_view(model_admin: admin.ModelAdmin, request: HttpRequest, object_id: int) -> HttpResponse:
    card = get_object_or_404(Card.objects.select_related("deck__lesson__course"), pk=object_id)
    shown = CardOutput(card).data
    context = {**preview_context(model_admin, request, card), "card": shown}
    if shown["format"] == CardFormat.HTML:
        # Shown as a client shows it: the card's allowed HTML, cleaned again in case a row was written around the rules.
        context["definition_html"] = mark_safe(card_html_clean(shown["definition"]))  # noqa: S308 - cleaned here
        context["example_html"] = mark_safe(card_html_clean(shown["example"]))  # noqa: S308 - cleaned here
    return TemplateResponse(request, "admin/content/card/preview.html", context)


class PreviewAdmin(admin.ModelAdmin):
    """Adds "<pk>/preview/"; the model's change_form.html template links to it as "Preview"."""

    def get_urls(self) -> list[URLPattern]:
        # Before the default URLs, whose "<object_id>/" pattern would otherwise take "<pk>/preview/".
        return [
            path(
                "<int:object_id>/preview/",
                self.admin_site.admin_view(self.preview_view),
                name=f"{self.opts.app_label}_{self.opts.model_name}_preview",
            ),
            *super().get_urls(),
        ]

    def preview_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        raise NotImplementedError


class CardPreviewAdmin(PreviewAdmin):
    def preview_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        return card_preview_view(self, request, object_id)
