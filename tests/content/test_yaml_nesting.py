"""Course files nested absurdly deep are refused with a line, before the YAML composer can recurse."""

from __future__ import annotations

import pytest

from apps.content.content_files.source import MAX_NESTING, ContentSource, parse_source


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[" * 100_000, 1),
        ("{a: " * 50_000, 1),
        ("course:\n" + "".join(" " * depth + "k:\n" for depth in range(1, 200)), MAX_NESTING + 1),
    ],
    ids=["flow sequences", "flow mappings", "block mappings"],
)
def test_nesting_past_the_limit_is_an_error_with_its_line(text: str, line: int):
    parsed, errors = parse_source(ContentSource("deep.yaml", text))
    assert parsed is None
    assert [(error.line, error.message) for error in errors] == [(line, f"nested more than {MAX_NESTING} levels deep")]


def test_nesting_up_to_the_limit_is_read():
    text = "course: " + "[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1) + "\n"
    parsed, errors = parse_source(ContentSource("deep.yaml", text))
    assert errors == [] and parsed is not None
