"""Card media: which bytes are images or sounds we serve, their URLs, and storing them once per content."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from urllib.parse import quote

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from apps.common.media_types import media_type_sniff
from apps.interchange.models import MediaFile, MediaKind, media_file_path


def media_kind_sniff(data: bytes) -> MediaKind | None:
    """The type the first bytes prove, or None (`media_type_sniff`): the name's suffix is never trusted."""
    found = media_type_sniff(data)
    return None if found is None else MediaKind(found)


def media_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def media_url(*, sha256: str, name: str) -> str:
    """Where a media file is served: by its content hash; the name is only there for people reading the URL."""
    return f"{settings.MEDIA_URL}{sha256}/{quote(name, safe='')}"


def media_files_store(*, files: Mapping[str, bytes]) -> int:
    """Store each file (by name as imported) not stored yet; returns how many were new.

    Content-addressed and written before the row, so a rolled-back import leaves at most a file that the
    next import of the same bytes reuses.
    """
    by_hash = {media_sha256(data): (name, data) for name, data in files.items()}
    known = set(MediaFile.objects.filter(sha256__in=by_hash).values_list("sha256", flat=True))
    created = 0
    for sha256, (name, data) in by_hash.items():
        if sha256 in known:
            continue
        kind = media_kind_sniff(data)
        if kind is None:
            continue
        media = MediaFile(sha256=sha256, original_name=name, content_type=kind, size=len(data))
        path = media_file_path(media, name)
        if not default_storage.exists(path):
            stored_as = default_storage.save(path, ContentFile(data))
            if stored_as != path:
                # Another import wrote the same bytes in between: theirs is the one the path names.
                default_storage.delete(stored_as)
        _, was_created = MediaFile.objects.get_or_create(
            sha256=sha256,
            defaults={"original_name": name, "content_type": kind, "size": len(data), "file": path},
        )
        created += was_created
    return created
