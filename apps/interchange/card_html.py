"""Card text from imported fields: HTML cut to a small allow-list, media pointed at our URLs, terms as plain text."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

import nh3

from apps.content.card_markup import ALLOWED_ATTRIBUTES, ALLOWED_TAGS, DROPPED_WITH_CONTENT

# Anki's sound reference, written as text in a field: [sound:clip.mp3].
_SOUND = re.compile(r"\[sound:([^\]\r\n]+)\]")
# Elements that end a line: in a one-line term they become a space, not nothing.
_LINE_BREAKS = re.compile(r"<\s*br\s*/?\s*>|<\s*/\s*(?:div|p|li)\s*>", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s+")
# A sanitized line break, as nh3 writes it.
_SANITIZED_BREAK = re.compile(r"<br\s*/?>")
# C0 controls and DEL, but for tab and newline; they have no place in card text and some stores refuse them.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

# As nh3 writes them: lower-case names, attributes quoted; an element whose src was refused has none.
_IMAGE_WITHOUT_SOURCE = re.compile(r"<img(?![^>]*\ssrc=)[^>]*>")
_AUDIO_WITHOUT_SOURCE = re.compile(r"<audio(?![^>]*\ssrc=)[^>]*>.*?</audio>", re.DOTALL)

CardFormat = Literal["text", "html"]


@dataclass(frozen=True)
class CardText:
    definition: str
    example: str
    format: CardFormat
    media: frozenset[str]


def media_names_in(value: str) -> set[str]:
    """The media names a field refers to ([sound:x] and <img src>), as written."""
    names = {match.group(1).strip() for match in _SOUND.finditer(value)}

    def collect(tag: str, attribute: str, attribute_value: str) -> str | None:
        if attribute == "src":
            names.add(attribute_value)
        return attribute_value

    nh3.clean(
        value,
        tags={"img", "audio"},
        attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        attribute_filter=collect,
    )
    return names


def field_html(value: str, media_urls: Mapping[str, str]) -> tuple[str, set[str]]:
    """The field as allowed HTML, and the media names it kept. Every URL that is not one of ours is dropped."""
    used: set[str] = set()

    def sound(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        return f'<audio src="{html.escape(name)}" controls></audio>' if _media_url(name, media_urls) else ""

    def rewrite(tag: str, attribute: str, attribute_value: str) -> str | None:
        if attribute != "src":
            return attribute_value
        url = _media_url(attribute_value, media_urls)
        if url is not None:
            used.add(_media_name(attribute_value, media_urls))
        return url

    cleaned = _media_without_source(
        nh3.clean(
            _CONTROLS.sub("", _SOUND.sub(sound, value)),
            tags=set(ALLOWED_TAGS),
            clean_content_tags=set(DROPPED_WITH_CONTENT),
            attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
            attribute_filter=rewrite,
            url_schemes=set(),
            link_rel=None,
            strip_comments=True,
        )
    )
    return cleaned, used


def _media_without_source(cleaned: str) -> str:
    """Sanitized HTML without the images and players whose source was refused: an empty <img> shows nothing."""
    return _AUDIO_WITHOUT_SOURCE.sub("", _IMAGE_WITHOUT_SOURCE.sub("", cleaned))


def _media_name(value: str, media_urls: Mapping[str, str]) -> str:
    return value if value in media_urls else unquote(value)


def _media_url(value: str, media_urls: Mapping[str, str]) -> str | None:
    # Some tools percent-encode names in src; the package's media list never does.
    return media_urls.get(value) or media_urls.get(unquote(value))


def plain_line(value: str) -> str:
    """One line of plain text: markup and media removed, entities decoded, whitespace collapsed."""
    without_sounds = _SOUND.sub(" ", _LINE_BREAKS.sub(" ", value))
    text = html.unescape(nh3.clean(without_sounds, tags=set(), clean_content_tags=set(DROPPED_WITH_CONTENT)))
    return _WHITESPACE.sub(" ", _CONTROLS.sub("", text)).strip()


def _as_text(cleaned: str) -> str | None:
    """A sanitized field as plain text when its only markup is line breaks, else None.

    Text cards are exported with their line breaks as <br>, so they come back as text cards.
    """
    broken = _SANITIZED_BREAK.sub("\n", cleaned)
    return None if "<" in broken else html.unescape(broken)


def plain_text(value: str) -> str:
    """A field meant as plain text (a code listing): line breaks kept, other markup removed, entities decoded."""
    cleaned = nh3.clean(
        _CONTROLS.sub("", _LINE_BREAKS.sub("\n", value)),
        tags=set(),
        clean_content_tags=set(DROPPED_WITH_CONTENT),
    )
    return html.unescape(cleaned)


def card_text(*, definition: str, extras: list[str], media_urls: Mapping[str, str]) -> CardText:
    """Definition and example: plain text when nothing but text and line breaks survives sanitizing, else HTML."""
    cleaned_definition, media = field_html(definition, media_urls)
    cleaned_extras: list[str] = []
    for extra in extras:
        cleaned, used = field_html(extra, media_urls)
        media |= used
        if cleaned.strip():
            cleaned_extras.append(cleaned)
    # nh3 escapes every "<" that is not a kept tag, so a "<" left beyond line breaks means markup.
    as_text = [_as_text(field) for field in (cleaned_definition, *cleaned_extras)]
    if any(field is None for field in as_text):
        return CardText(cleaned_definition, "<br>".join(cleaned_extras), "html", frozenset(media))
    definition_text, *extra_texts = (field or "" for field in as_text)
    return CardText(definition_text, "\n".join(extra_texts), "text", frozenset(media))
