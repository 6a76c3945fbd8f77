"""The one-click unsubscribe page: a signed link works without logging in."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from apps.reminders.services import InvalidUnsubscribeLink, reminders_unsubscribe


# Mail clients post the List-Unsubscribe-Post form without a CSRF token; the signed link is the proof.
@csrf_exempt
@require_http_methods(["GET", "POST"])
def unsubscribe_view(request: HttpRequest, token: str) -> HttpResponse:
    """GET asks to confirm, so link scanners that open links do not unsubscribe anyone; POST unsubscribes.

    Done, it sends the browser on to the web app's confirmation page (303: the app's page is read with GET).
    """
    # The web app's home and settings pages (apps.web.routes), where reminders are turned on again.
    links = {"home_url": f"{settings.FRONTEND_URL}/", "settings_url": f"{settings.FRONTEND_URL}/settings"}
    if request.method == "GET":
        return render(request, "reminders/unsubscribe.html", links)
    try:
        reminders_unsubscribe(token=token)
    except InvalidUnsubscribeLink:
        return render(request, "reminders/unsubscribe.html", {**links, "invalid": True}, status=400)
    return HttpResponseRedirect(f"{settings.FRONTEND_URL}/unsubscribed", status=303)
