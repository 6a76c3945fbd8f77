"""Parity with Anki itself: a collection studied by Anki's own scheduler, imported here with its history.

For the same revlog, each card's memory here is the one Anki computes from it (stability within
0.1 %, difficulty within 0.01), and each interval lies in the fuzz range of the interval Anki's
stability gives: elapsed time is counted in learner days, a Forget starts a card afresh, Set due
date and cramming leave memory alone, reviewing ahead in a rescheduling filtered deck counts.
"""

from __future__ import annotations

import io
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from apps.content.content_files.load import content_sources_load
from apps.content.content_files.source import ContentSource
from apps.content.models import Card, Course, Deck, Lesson
from apps.interchange.anki_export import decks_anki_package
from apps.interchange.anki_history import SkipReason, anki_history_import_create, anki_history_import_run
from apps.interchange.services import ImportSource, deck_import
from apps.srs.core.scheduling import SchedulerConfig, fuzz_range, learner_day, learner_days_between
from apps.srs.models import CardMemory
from apps.srs.settings.services import scheduling_settings_update
from tests.support.api import make_learner
from tests.support.course_files import minimal_course, to_yaml
from tests.support.real_anki import anki_collection_studied, anki_export, anki_import, collection_copy

STABILITY_RELATIVE = 1e-3
DIFFICULTY_ABSOLUTE = 0.01
_REVIEW_TYPE = 2


@pytest.fixture(scope="module")
def studied(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return anki_collection_studied(tmp_path_factory.mktemp("anki"), seed=7)


@pytest.fixture
def imported(db: Any, studied: dict[str, Any], settings: Any, tmp_path: Any) -> dict[str, Card]:
    settings.MEDIA_ROOT = tmp_path / "media"
    content_sources_load(sources=[ContentSource("course.yaml", to_yaml(minimal_course()))])
    deck_import(
        course=Course.objects.get(slug="pipelines-101"),
        lesson=Lesson.objects.get(slug="first-pipeline"),
        deck_slug="from-anki",
        deck_title=None,
        source=ImportSource(name="study.apkg", file=io.BytesIO(studied["package_bytes"])),
        dry_run=False,
    )
    return {card.anki_guid: card for card in Card.objects.filter(deck__slug="from-anki")}


def _learner_as_in_anki(studied: dict[str, Any]) -> Any:
    learner, _ = make_learner("from-anki")
    scheduling_settings_update(
        learner=learner,
        changes={
            "timezone": "UTC",
            "day_start_hour": 4,
            "desired_retention": 0.9,
            "fsrs_parameters": studied["parameters"],
        },
    )
    return learner


def _history_imported(learner: Any, studied: dict[str, Any]) -> Any:
    package = studied["package_bytes"]
    row = anki_history_import_create(learner=learner, package=io.BytesIO(package), size=len(package))
    anki_history_import_run(import_id=row.pk, now=timezone.now())
    row.refresh_from_db()
    return row


def test_the_simulated_collection_holds_every_kind_of_history(studied: dict[str, Any]) -> None:
    """The histories compared below include learning, review, relearning, filtered, Forget and Set due date."""
    kinds = studied["revlog_kinds"]
    assert {"0", "1", "2", "3", "4"} <= set(kinds), kinds
    assert studied["resets"] == 2
    assert len(studied["cards"]) == 41


def test_memory_states_equal_ankis_own_card_by_card(studied: dict[str, Any], imported: dict[str, Card]) -> None:
    learner = _learner_as_in_anki(studied)
    row = _history_imported(learner, studied)
    assert row.status == "done", row.error_message
    assert row.total_entries == studied["revlog"]
    assert row.applied + sum(row.skipped.values()) == row.total_entries

    memories = {memory.card_id: memory for memory in CardMemory.objects.filter(learner=learner)}
    special = studied["special"]
    guids = studied["guids"]
    stability_errors, difficulty_errors = [], []
    for anki_card in studied["cards"]:
        card = imported[anki_card["guid"]]
        memory = memories.get(card.pk)
        if anki_card["stability"] is None:
            assert memory is None, f"{anki_card['guid']} is new in Anki but has a memory here"
            continue
        assert memory is not None, anki_card
        stability_errors.append(abs(memory.stability - anki_card["stability"]) / anki_card["stability"])
        difficulty_errors.append(abs(memory.difficulty - anki_card["difficulty"]))
        assert stability_errors[-1] <= STABILITY_RELATIVE, (anki_card, memory.stability)
        assert difficulty_errors[-1] <= DIFFICULTY_ABSOLUTE, (anki_card, memory.difficulty)
    assert imported[guids[str(special["left_new"])]].pk not in memories
    assert imported[guids[str(special["relearned_after_reset"])]].pk in memories
    assert row.skipped.get(SkipReason.BEFORE_RESET, 0) > 0
    assert len(stability_errors) >= 30


def test_intervals_lie_in_the_fuzz_range_of_ankis_interval(studied: dict[str, Any], imported: dict[str, Card]) -> None:
    learner = _learner_as_in_anki(studied)
    _history_imported(learner, studied)
    config = SchedulerConfig(parameters=tuple(studied["parameters"]))
    due_set = studied["guids"][str(studied["special"]["due_set"])]
    due_set_last = studied["guids"][str(studied["special"]["due_set_last"])]
    outside: dict[str, Any] = {}
    compared = 0
    for anki_card in studied["cards"]:
        if anki_card["type"] != _REVIEW_TYPE or anki_card["guid"] in (due_set, due_set_last):
            continue
        memory = CardMemory.objects.get(learner=learner, card=imported[anki_card["guid"]])
        unfuzzed = config.scheduler()._next_interval(stability=anki_card["stability"])
        low, high = fuzz_range(unfuzzed, maximum_interval=config.maximum_interval) or (unfuzzed, unfuzzed)
        ours = learner_days_between(memory.last_review, memory.due, timezone="UTC", day_start_hour=4)
        compared += 1
        # Anki's order (Good past Hard, Easy past Good) may raise its interval past the range; this side's
        # order may raise as far. Anywhere else the interval lies in the range.
        if not low <= ours <= max(high, anki_card["interval"]):
            outside[anki_card["guid"]] = (
                ours,
                anki_card["interval"],
                unfuzzed,
                memory.stability,
                memory.due,
                memory.last_review,
            )
    assert compared >= 25
    assert not outside, outside


# --- packages both ways ------------------------------------------------------------------------------------------


def test_anki_to_here_to_anki_leaves_every_note_as_it_was(
    studied: dict[str, Any], imported: dict[str, Card], tmp_path: Path
) -> None:
    """Into the profile it came from, with Anki's default options, the export here changes nothing there:
    no note new or conflicting, fields, tags, note types and scheduling as they were, media all present."""
    assert len(imported) == len(studied["cards"])
    exported = decks_anki_package(decks=[Deck.objects.get(slug="from-anki")])
    # Anki's own package imported back into its own profile is the baseline: it changes nothing.
    baseline = anki_import(collection_copy(studied["collection"], tmp_path / "baseline"), studied["package_bytes"])
    after = anki_import(collection_copy(studied["collection"], tmp_path / "learner"), exported)
    assert after["log"]["new"] == after["log"]["conflicting"] == after["log"]["missing_notetype"] == 0, after["log"]
    assert after["log"]["duplicate"] + after["log"]["updated"] == len(imported)
    assert after["notes"] == baseline["notes"]
    assert after["note_types"] == baseline["note_types"]
    assert after["cards"] == baseline["cards"]
    assert after["media_missing"] == []

    # Into a profile that never had them: the notes arrive on their own note type, with their media.
    fresh = anki_import(tmp_path / "fresh" / "collection.anki2", exported)
    assert fresh["log"]["new"] == len(imported)
    assert {guid: note["fields"] for guid, note in fresh["notes"].items()} == {
        guid: note["fields"] for guid, note in baseline["notes"].items()
    }
    assert fresh["media_missing"] == []
    assert {"pipeline chart.png", "say.mp3"} <= set(fresh["media_files"])


def test_an_edit_here_updates_that_note_alone_in_anki_and_keeps_its_scheduling(
    studied: dict[str, Any], imported: dict[str, Card], tmp_path: Path
) -> None:
    edited = next(card for card in imported.values() if card.term.startswith("Which tf.data transformation 1?"))
    edited.definition = "Answer 1, edited here: interleave"
    edited.save()
    exported = decks_anki_package(decks=[Deck.objects.get(slug="from-anki")])
    baseline = anki_import(collection_copy(studied["collection"], tmp_path / "baseline"), studied["package_bytes"])
    after = anki_import(collection_copy(studied["collection"], tmp_path / "learner"), exported)
    assert after["log"]["updated"] == 1 and after["log"]["new"] == after["log"]["conflicting"] == 0, after["log"]
    assert after["notes"][edited.anki_guid]["fields"][1] == "Answer 1, edited here: interleave"
    assert after["notes"][edited.anki_guid]["note_type_id"] == baseline["notes"][edited.anki_guid]["note_type_id"]
    assert after["cards"] == baseline["cards"]
    others = {guid: note for guid, note in after["notes"].items() if guid != edited.anki_guid}
    assert others == {guid: note for guid, note in baseline["notes"].items() if guid != edited.anki_guid}


def test_here_to_anki_to_here_changes_nothing_here(shipped_course: Any, tmp_path: Path) -> None:
    deck = Deck.objects.select_related("lesson__course").get(slug="tf-data-pipelines")
    before = list(Card.objects.filter(deck=deck).order_by("pk").values())
    in_anki = anki_import(tmp_path / "anki" / "collection.anki2", decks_anki_package(decks=[deck]))
    assert in_anki["log"]["new"] == Card.objects.filter(deck=deck, archived=False).count()
    back = anki_export(tmp_path / "anki" / "collection.anki2")
    report = deck_import(
        course=deck.lesson.course,
        lesson=deck.lesson,
        deck_slug=deck.slug,
        deck_title=None,
        source=ImportSource(name="from-anki.apkg", file=io.BytesIO(back)),
        dry_run=False,
    )
    assert (report.cards.created, report.cards.updated, report.cards.archived) == (0, 0, 0), report.lines()
    assert list(Card.objects.filter(deck=deck).order_by("pk").values()) == before


def test_a_set_due_date_after_the_last_answer_moves_the_due_day_alone(
    studied: dict[str, Any], imported: dict[str, Card]
) -> None:
    learner = _learner_as_in_anki(studied)
    _history_imported(learner, studied)
    anki_card = next(
        card for card in studied["cards"] if card["guid"] == studied["guids"][str(studied["special"]["due_set_last"])]
    )
    memory = CardMemory.objects.get(learner=learner, card=imported[anki_card["guid"]])
    anki_due = date.fromisoformat(studied["today"]) + timedelta(days=anki_card["due_in_days"])
    assert learner_day(memory.due, timezone="UTC", day_start_hour=4) == anki_due
    assert abs(memory.stability - anki_card["stability"]) / anki_card["stability"] <= STABILITY_RELATIVE
