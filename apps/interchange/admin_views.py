"""The admin's "Import Anki or CSV" page for decks: a form, then the import report or the reason it was refused."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from apps.common.errors import DomainError
from apps.content.models import Course, Deck, Lesson
from apps.interchange.services import ANKI_SUFFIXES, ImportReport, ImportSource, deck_import
from apps.interchange.tabular import DELIMITERS

ACCEPTED_SUFFIXES = (*ANKI_SUFFIXES, *DELIMITERS)


class DeckImportForm(forms.Form):
    course = forms.ModelChoiceField(queryset=Course.objects.order_by("title"))
    lesson = forms.ModelChoiceField(
        queryset=Lesson.objects.select_related("course").order_by("course__title", "position"),
        help_text="A lesson of the course chosen above.",
    )
    deck_slug = forms.SlugField(
        max_length=80, label="Deck slug", help_text="An existing deck of that lesson, or the slug of a new one."
    )
    deck_title = forms.CharField(
        max_length=200,
        required=False,
        label="Deck title",
        help_text="For a new deck; left empty, it is the Anki deck's name or the file's name.",
    )
    file = forms.FileField(
        help_text="An Anki package (.apkg, .colpkg), or a .csv, .tsv or .txt table with a header row: "
        "term, definition, and optionally example, tags, slug."
    )
    dry_run = forms.BooleanField(
        required=False, initial=True, label="Validate only", help_text="Show what would change; write nothing."
    )

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if PurePath(upload.name).suffix.lower() not in ACCEPTED_SUFFIXES:
            raise forms.ValidationError(f"Choose a file ending in {', '.join(ACCEPTED_SUFFIXES)}.")
        if upload.size > settings.ANKI_PACKAGE_MAX_BYTES:
            raise forms.ValidationError(
                f"The file is {upload.size:,} bytes; at most {settings.ANKI_PACKAGE_MAX_BYTES:,} are accepted."
            )
        return upload

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        course, lesson = data.get("course"), data.get("lesson")
        if course is not None and lesson is not None and lesson.course_id != course.pk:
            self.add_error("lesson", f"“{lesson}” is a lesson of another course.")
        return data


def deck_import_view(model_admin: admin.ModelAdmin[Deck], request: HttpRequest) -> HttpResponse:
    """Staff who may add and change decks import into one; the page shows the report, or why nothing was written."""
    if not (model_admin.has_add_permission(request) and model_admin.has_change_permission(request)):
        raise PermissionDenied
    report: ImportReport | None = None
    refusal = ""
    status = 200
    if request.method == "POST":
        form = DeckImportForm(request.POST, request.FILES)
        if form.is_valid():
            data = form.cleaned_data
            upload = data["file"]
            try:
                report = deck_import(
                    course=data["course"],
                    lesson=data["lesson"],
                    deck_slug=data["deck_slug"],
                    deck_title=data["deck_title"] or None,
                    source=ImportSource(name=upload.name, file=upload.file),
                    dry_run=data["dry_run"],
                )
            except DomainError as exc:
                refusal, status = exc.message, exc.status_code
        else:
            status = 400
    else:
        form = DeckImportForm(initial={"course": request.GET.get("course")})
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": "Import Anki or CSV",
        "form": form,
        "report": report,
        "refusal": refusal,
        "media": model_admin.media + form.media,
    }
    return TemplateResponse(request, "admin/interchange/deck_import.html", context, status=status)
