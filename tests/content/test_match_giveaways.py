"""A card's definition must not name its term: Match the Pairs lays definitions beside terms."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.content.content_files.validate import term_in_definition
from tests.support.course_files import minimal_course, write_course


@pytest.mark.parametrize(
    ("term", "definition", "given_away"),
    [
        ("map", "Applies a function to every element.", None),
        ("map", "Dataset.map(fn) applies a function to every element.", "map"),
        ("map", "The function is mapped over the elements.", "map"),
        ("batch", "Stacks consecutive elements into mini-batches.", "batch"),
        ("shuffle", "Shuffling breaks the storage order.", "shuffle"),
        ("cache", "Keeps what was cached in memory.", "cache"),
        (
            "Shuffle buffer size",
            "shuffle keeps a buffer of buffer_size elements, whatever their size.",
            "Shuffle buffer size",
        ),
        ("Shuffle buffer size", "How many elements the buffer draws from; its size sets the mixing.", None),
        ("Dataset.map(fn)", "Calls `map` on each element.", "map"),
        ("Dataset.map(fn)", "Applies fn to each element of a dataset.", None),
        ("tf.data.AUTOTUNE", "Asks AUTOTUNE to pick the value.", "AUTOTUNE"),
        ("tf.train.Example", "A message; decode it with tf.io.parse_single_example.", None),
        ("tf.train.Example", "For example, a message of features.", "Example"),
        # A module path has no bare name: "data" alone is an ordinary word.
        ("tf.data", "Reads data from storage.", None),
        ("tf.data", "A tf.data.Dataset reads from storage.", "tf.data"),
        ("deterministic=False", "Emits elements in a non-deterministic order.", "deterministic"),
        ("num_parallel_calls", "How many elements map processes at once.", None),
        ("num_parallel_calls", "Set num_parallel_calls to AUTOTUNE.", "num_parallel_calls"),
        ("Where to put cache", "After decoding and before augmentation.", None),
        ("TensorFlow Profiler", "TensorFlow's performance profiler.", "TensorFlow Profiler"),
        ("TFRecord", "Read with tf.data.TFRecordDataset.", None),
    ],
)
def test_term_in_definition(term: str, definition: str, given_away: str | None) -> None:
    assert term_in_definition(term, definition) == given_away


@pytest.mark.django_db
def test_a_definition_that_names_its_term_is_refused_with_its_line(tmp_path: Path) -> None:
    document = minimal_course()
    document["lessons"][0]["decks"][0]["cards"][0]["definition"] = "Dataset.map(fn) transforms elements"
    path = write_course(tmp_path, document)
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was loaded"):
        call_command("load_decks", str(path), stdout=io.StringIO(), stderr=err)
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "Dataset.map(fn)" in text)
    assert f"{path}:{line}: lessons[0].decks[0].cards[0].definition: the definition contains its term ('map')" in (
        err.getvalue()
    )


@pytest.mark.django_db
def test_archived_cards_are_not_checked(tmp_path: Path) -> None:
    document = minimal_course()
    card = document["lessons"][0]["decks"][0]["cards"][1]
    card.update(definition="Groups samples into batches", archived=True)
    call_command("load_decks", str(write_course(tmp_path, document)), stdout=io.StringIO())
