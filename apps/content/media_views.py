"""Serving the images and sounds course files ship: by name, as an image or sound only, never run as a page."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotModified
from django.views.decorators.http import require_safe

from apps.content.course_media import course_media_etag, course_media_read

# A deploy may change a file behind its name: kept an hour, then asked again (the ETag answers 304).
COURSE_MEDIA_CACHE = "public, max-age=3600"


@require_safe
def course_media_view(request: HttpRequest, name: str) -> HttpResponse:
    found = course_media_read(name)
    if found is None:
        raise Http404("No such course media file.")
    data, media_type = found
    etag = course_media_etag(data)
    response: HttpResponse
    if request.headers.get("If-None-Match") == etag:
        response = HttpResponseNotModified()
    else:
        response = HttpResponse(data, content_type=media_type)
    response["Cache-Control"] = COURSE_MEDIA_CACHE
    response["ETag"] = etag
    response["X-Content-Type-Options"] = "nosniff"
    # Opened directly, the file gets no origin, scripts or forms: an image or sound has no use for them.
    response["Content-Security-Policy"] = "sandbox"
    return response
