"""Images and sounds a course file ships beside it (decks/media/), shown on its HTML cards.

A card names one as `/media/course/<name>`; loading the file checks that it exists and is an image or a
sound this site serves (by its bytes), and the site serves it from COURSE_MEDIA_DIR. Media that deck
imports store are served by content hash instead (apps.interchange); both live under /media/, the only
place a card may load media from (apps.content.card_markup).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from django.conf import settings

from apps.common.media_types import media_type_sniff

# A plain file name: no folder, no leading dot, nothing a URL or a shell would read otherwise.
COURSE_MEDIA_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
# As large as an imported media file may be.
COURSE_MEDIA_MAX_BYTES = 5 * 1024 * 1024
_SOURCES = re.compile(r"""\ssrc\s*=\s*["']([^"']*)["']""")


def course_media_path(name: str) -> Path | None:
    """The file a course media name stands for, or None when the name is not one a course may use."""
    if not COURSE_MEDIA_NAME.fullmatch(name):
        return None
    return Path(settings.COURSE_MEDIA_DIR) / name


def course_media_read(name: str) -> tuple[bytes, str] | None:
    """The file's bytes and the type they prove; None when there is no such servable file."""
    path = course_media_path(name)
    if path is None or not path.is_file() or path.stat().st_size > COURSE_MEDIA_MAX_BYTES:
        return None
    data = path.read_bytes()
    media_type = media_type_sniff(data)
    return None if media_type is None else (data, media_type)


def course_media_etag(data: bytes) -> str:
    return f'"{hashlib.sha256(data).hexdigest()}"'


def course_media_problems(html: str) -> list[str]:
    """What is wrong with each course media source in a card's HTML: a missing file, or bytes not served."""
    prefix = settings.COURSE_MEDIA_URL
    problems = []
    for source in _SOURCES.findall(html):
        if not source.startswith(prefix):
            continue
        name = source.removeprefix(prefix)
        path = course_media_path(name)
        if path is None:
            problems.append(f"{source}: not a plain file name (letters, digits, '.', '_' and '-')")
        elif not path.is_file():
            problems.append(f"{source}: no file {name} in the course media folder")
        elif path.stat().st_size > COURSE_MEDIA_MAX_BYTES:
            problems.append(f"{source}: larger than {COURSE_MEDIA_MAX_BYTES // (1024 * 1024)} MB")
        elif course_media_read(name) is None:
            problems.append(f"{source}: not a PNG, JPEG, GIF or WebP image, nor an MP3, Ogg or WAV sound")
    return problems
