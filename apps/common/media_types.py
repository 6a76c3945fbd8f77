"""Which bytes are images or sounds this site serves on cards: by what their first bytes prove, never their name."""

from __future__ import annotations


def media_type_sniff(data: bytes) -> str | None:
    """The MIME type the first bytes prove, or None. SVG (a script host) never passes."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in {b"GIF87a", b"GIF89a"}:
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if data.startswith(b"OggS"):
        return "audio/ogg"
    # An ID3 tag, or an MPEG audio frame header (11 sync bits, then a layer other than "reserved").
    if data.startswith(b"ID3") or (len(data) >= 2 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0 and data[1] & 0x06):
        return "audio/mpeg"
    return None
