"""The rules for authored text: how titles, definitions, code and prose are normalized wherever they enter, and
the form in which a typed answer is compared with the accepted ones."""

import unicodedata

# Only spaces and tabs count as trailing whitespace: other characters (a no-break space, a form feed) may be meant.
_TRAILING_BLANKS = " \t"


def authored_text(value: str) -> str:
    """Multi-line text: LF line endings, no trailing blanks on any line, no leading or trailing blank lines.

    The first line's indentation is kept, so code keeps its shape; the result ends without a newline.
    """
    lines = [line.rstrip(_TRAILING_BLANKS) for line in value.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    start, end = 0, len(lines)
    while start < end and not lines[start]:
        start += 1
    while end > start and not lines[end - 1]:
        end -= 1
    return "\n".join(lines[start:end])


def authored_line(value: str) -> str:
    """Single-line text (titles, terms, names, headings): surrounding whitespace removed."""
    return value.strip()


def normalize_text(text: str) -> str:
    """A typed answer as it is compared: NFKC and case folding (as NFKC_Casefold), no whitespace or punctuation."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return "".join(ch for ch in folded if not ch.isspace() and not unicodedata.category(ch).startswith("P"))
