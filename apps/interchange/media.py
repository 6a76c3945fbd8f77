"""Card media: which bytes are images or sounds we serve, their URLs, and storing them once per content."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from urllib.parse import quote

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from apps.interchange.models import MediaFile, MediaKind, media_file_path


def media_kind_sniff(data: bytes) -> MediaKind | None:
    """The type the first bytes prove, or None. The name's suffix is never trusted; SVG (a script host) never passes."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return MediaKind.PNG
    if data.startswith(b"\xff\xd8\xff"):
        return MediaKind.JPEG
    if data[:6] in {b"GIF87a", b"GIF89a"}:
        return MediaKind.GIF
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return MediaKind.WEBP
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return MediaKind.WAV
    if data.startswith(b"OggS"):
        return MediaKind.OGG
    # An ID3 tag, or an MPEG audio frame header (11 sync bits, then a layer other than "reserved").
    if data.startswith(b"ID3") or (len(data) >= 2 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0 and data[1] & 0x06):
        return MediaKind.MP3
    return None


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
