"""How long each field of a card may be: one bound per field, the same for course files, the admin and imports.

Every study queue, match board and export carries a card's fields, so none is unbounded. Lengths
count characters of the stored text (for an HTML card, its sanitized HTML).
"""

from __future__ import annotations

CARD_TERM_MAX_CHARS = 200
CARD_DEFINITION_MAX_CHARS = 2_000
CARD_EXAMPLE_MAX_CHARS = 2_000
CARD_CODE_MAX_CHARS = 4_000

# By the name each field has on a card, in the order a card shows them.
CARD_FIELD_MAX_CHARS: dict[str, int] = {
    "term": CARD_TERM_MAX_CHARS,
    "definition": CARD_DEFINITION_MAX_CHARS,
    "example": CARD_EXAMPLE_MAX_CHARS,
    "code": CARD_CODE_MAX_CHARS,
}
