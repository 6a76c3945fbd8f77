"""The learner web app's shell page: the same HTML at every client route; the bundle reads the API. And its
service worker, at the root so that it may cover every route."""

from __future__ import annotations

from pathlib import Path

from django.contrib.staticfiles import finders
from django.http import Http404, HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.csp import CSP
from django.views.decorators.cache import cache_control
from django.views.decorators.csp import csp_override
from django.views.decorators.http import require_safe

from apps.common.errors import not_found_view

# The shell and its bundle load only from this server and run no inline code, so nothing else is
# allowed: an injected script or style cannot run. Images may be data: and blob: URLs (card images
# the app builds), workers blob: ones. SECURE_CSP stays empty: the admin and the API docs keep
# their own inline scripts and styles, which this policy would block.
SHELL_CSP: dict[str, list[str]] = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:", "blob:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "worker-src": [CSP.SELF, "blob:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
}


# no-cache: browsers check back for the shell on every visit, so it never outlives a deploy.
@require_safe
@cache_control(no_cache=True)
@csp_override(SHELL_CSP)
def shell_view(request: HttpRequest, **route_params: str) -> HttpResponse:
    """The route's parameters are the app's to read from the address; the page never reads the database."""
    # Rendered without the request, so no context processor can look up the user or the session.
    return HttpResponse(render_to_string("web/shell.html"))


@cache_control(no_cache=True)
@csp_override(SHELL_CSP)
def _shell_not_found(request: HttpRequest) -> HttpResponse:
    return HttpResponse(render_to_string("web/shell.html"), status=404)


# Paths a browser never reads as the app's pages: their 404 stays the API's JSON.
_NOT_THE_APPS = ("/api/", "/admin/", "/static/", "/media/")


def page_not_found_view(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """A 404: for a browser asking for a page at a path the app does not have, the app's shell (which says
    "Page not found" in the app's own frame, with the way home); for anything else, the API's JSON error."""
    wants_page = request.method in ("GET", "HEAD") and "text/html" in request.headers.get("Accept", "")
    if wants_page and not request.path.startswith(_NOT_THE_APPS):
        return _shell_not_found(request)
    return not_found_view(request, exception)


# Built with the bundle (apps/web/frontend/build.mjs); a browser checks back for it on each visit, and
# installs a new version when its bytes change.
SERVICE_WORKER_STATIC_PATH = "web/sw.js"


@require_safe
@cache_control(no_cache=True)
@csp_override(SHELL_CSP)
def service_worker_view(request: HttpRequest) -> HttpResponse:
    found = finders.find(SERVICE_WORKER_STATIC_PATH)
    if not isinstance(found, str):
        raise Http404("The web app's bundle is not built.")
    return HttpResponse(Path(found).read_bytes(), content_type="text/javascript; charset=utf-8")
