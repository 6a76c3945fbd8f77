"""The CSV/TSV reader: header row, delimiter by suffix, UTF-8 with or without BOM, errors that name the line."""

from __future__ import annotations

import io

import pytest

from apps.interchange.tabular import TabularInvalid, TabularLimits, tabular_read


def rows(text: str | bytes, name: str = "cards.csv", **limits: int):
    data = text.encode() if isinstance(text, str) else text
    return tabular_read(io.BytesIO(data), name=name, limits=TabularLimits(**limits))


def refusal(text: str | bytes, name: str = "cards.csv", **limits: int) -> str:
    with pytest.raises(TabularInvalid) as caught:
        rows(text, name, **limits)
    return caught.value.message


def test_csv_with_bom_and_every_column():
    (row,) = rows('\ufeffTerm,Definition,Example,Tags,Slug\nmap,"Applies, per element",ds.map(f),a b,my-map\n')
    assert (row.line, row.term, row.definition, row.example, row.tags, row.slug) == (
        2,
        "map",
        "Applies, per element",
        "ds.map(f)",
        ["a", "b"],
        "my-map",
    )


@pytest.mark.parametrize("name", ["cards.tsv", "cards.txt"])
def test_tab_separated_by_suffix(name):
    (row,) = rows("term\tdefinition\nbatch, padded\tGroups elements\n", name)
    assert (row.term, row.definition, row.tags) == ("batch, padded", "Groups elements", [])


def test_a_row_spanning_lines_is_named_by_its_first_line_and_blank_lines_are_skipped():
    parsed = rows('term,definition\n\na,"one\ntwo"\nb,three\n')
    assert [(row.line, row.term) for row in parsed] == [(3, "a"), (5, "b")]


def test_header_problems_are_named():
    assert "lacks definition" in refusal("term,example\na,b\n")
    assert "unknown column(s) 'front'" in refusal("front,definition\na,b\n")
    assert "named twice" in refusal("term,term,definition\na,b,c\n")
    assert "empty" in refusal("")


def test_a_row_with_the_wrong_number_of_cells_names_its_line():
    assert refusal("term,definition\na,b\nc\n").startswith("cards.csv:3:")


def test_text_that_is_not_utf8_names_its_line():
    assert refusal(b"term,definition\na,b\nc,\xff\n").startswith("cards.csv:3: the file is not UTF-8")


def test_limits_on_size_and_rows():
    assert "over the limit of 10 bytes" in refusal("term,definition\na,b\n", file_bytes=10)
    assert "cards.csv:4: more than 2 rows" in refusal("term,definition\na,b\nc,d\ne,f\n", rows=2)


def test_an_unknown_suffix_is_refused():
    assert "not a .csv, .tsv or .txt file" in refusal("term,definition\n", name="cards.xlsx")
