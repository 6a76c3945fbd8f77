"""The HTML an HTML card may hold: one allow-list for the importer, the course-file rules and the pages showing it."""

from __future__ import annotations

import nh3

# Formatting a card needs, and the two media elements; no links, styles, classes, scripts or frames.
ALLOWED_TAGS = frozenset(
    {"b", "i", "u", "em", "strong", "sub", "sup", "br", "p", "div", "span", "ul", "ol", "li", "code", "pre"}
    | {"img", "audio"}
)
ALLOWED_ATTRIBUTES = {"img": frozenset({"src", "alt"}), "audio": frozenset({"src", "controls"})}
# Removed with everything inside them, not only their tags.
DROPPED_WITH_CONTENT = frozenset({"script", "style", "title", "head", "template", "iframe", "object", "noscript"})
# Media a card may show is served by this site, under this path (apps.interchange.views); nothing else is loaded.
MEDIA_PATH_PREFIX = "/media/"


def _own_media_only(tag: str, attribute: str, value: str) -> str | None:
    if attribute == "src":
        return value if value.startswith(MEDIA_PATH_PREFIX) and "//" not in value else None
    return value


def card_html_clean(value: str) -> str:
    """The allowed part of a card's HTML: other elements, attributes, comments and foreign URLs removed."""
    return nh3.clean(
        value,
        tags=set(ALLOWED_TAGS),
        clean_content_tags=set(DROPPED_WITH_CONTENT),
        attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        attribute_filter=_own_media_only,
        url_schemes=set(),
        link_rel=None,
        strip_comments=True,
    )
