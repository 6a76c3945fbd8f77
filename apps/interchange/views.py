"""Serving imported card media: by content hash, cached for good, never run as a page."""

from __future__ import annotations

from django.http import FileResponse, Http404, HttpRequest
from django.views.decorators.http import require_safe

from apps.interchange.models import MediaFile

# Content-addressed: the bytes behind a URL never change, so clients may keep them a year without asking again.
IMMUTABLE_CACHE = "public, max-age=31536000, immutable"


@require_safe
def media_file_view(request: HttpRequest, sha256: str, name: str) -> FileResponse:
    media = MediaFile.objects.filter(sha256=sha256).first()
    if media is None:
        raise Http404("No such media file.")
    response = FileResponse(media.file.open("rb"), content_type=media.content_type)
    response["Cache-Control"] = IMMUTABLE_CACHE
    response["ETag"] = f'"{media.sha256}"'
    response["X-Content-Type-Options"] = "nosniff"
    # Opened directly, the file gets no origin, scripts or forms: an image or sound has no use for them.
    response["Content-Security-Policy"] = "sandbox"
    return response
