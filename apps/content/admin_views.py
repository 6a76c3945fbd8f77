"""Admin pages around the YAML import: an import's report, kept so that a reload shows it again, and the file format."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.safestring import mark_safe
from markdown_it import MarkdownIt

from apps.content.content_files.report import LoadReport

IMPORT_REPORTS_SESSION_KEY = "content_import_reports"
# Reports kept per session, oldest dropped first: enough for a few tabs, so an earlier report page still reloads.
KEPT_IMPORT_REPORTS = 5
# Items listed per kind on a report; the rest are counted as "and N more". A 10,000-card import stays a
# page one can scroll and a session entry of a few tens of kilobytes.
REPORT_ROWS_PER_KIND = 100
SCHEMA_FILE = Path("decks") / "SCHEMA.md"


def import_permitted(model_admin: admin.ModelAdmin, request: HttpRequest) -> bool:
    """An import creates and rewrites courses, so it needs both permissions; so does reading its report."""
    return model_admin.has_add_permission(request) and model_admin.has_change_permission(request)


def import_report_keep(*, request: HttpRequest, report: LoadReport) -> str:
    """Keep the report in the session, small (slugs, names, field names), under a new token for its page."""
    token = secrets.token_urlsafe(8)
    kept: dict[str, Any] = dict(request.session.get(IMPORT_REPORTS_SESSION_KEY, {}))
    kept[token] = report.to_dict(limit=REPORT_ROWS_PER_KIND)
    for old in list(kept)[:-KEPT_IMPORT_REPORTS]:
        del kept[old]
    request.session[IMPORT_REPORTS_SESSION_KEY] = kept
    return token


def report_context(report: LoadReport | None) -> dict[str, Any]:
    """What the report template needs: the report and its kinds, each listing at most REPORT_ROWS_PER_KIND items."""
    return {"report": report, "report_groups": report.groups(limit=REPORT_ROWS_PER_KIND) if report else []}


def import_report_view(model_admin: admin.ModelAdmin, request: HttpRequest, token: str) -> HttpResponse:
    if not import_permitted(model_admin, request):
        raise PermissionDenied
    data = request.session.get(IMPORT_REPORTS_SESSION_KEY, {}).get(token)
    report = LoadReport.from_dict(data) if data else None
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": "Import report",
        **report_context(report),
    }
    # A report from another session, or one dropped for newer ones, is gone: say so rather than show an empty page.
    return TemplateResponse(request, "admin/content/course/import_report.html", context, status=200 if report else 404)


def course_file_format_view(model_admin: admin.ModelAdmin, request: HttpRequest) -> HttpResponse:
    """decks/SCHEMA.md rendered; raw HTML in the file is shown as text, so the file cannot add markup to the page."""
    try:
        text = (Path(settings.BASE_DIR) / SCHEMA_FILE).read_text(encoding="utf-8")
    except OSError as exc:
        raise Http404(f"{SCHEMA_FILE} cannot be read.") from exc
    rendered = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": "Course file format",
        "source_name": str(SCHEMA_FILE),
        # Safe: with html off, markdown-it escapes every tag in the text and refuses javascript: links.
        "schema_html": mark_safe(rendered),  # noqa: S308
    }
    return TemplateResponse(request, "admin/content/course/course_file_format.html", context)
