"""A learner's Anki review history, uploaded in a package, replayed into their memory of the cards from it."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone

from apps.common.jobs import JobStatus, jobs_publish
from apps.content.models import Card
from apps.interchange.anki_history import (
    SkipReason,
    anki_client_review_id,
    anki_history_import_create,
    anki_history_import_run,
)
from apps.interchange.jobs import ANKI_HISTORY_IMPORTS
from apps.srs.models import AnkiHistoryImport, CardMemory, ReviewLog
from apps.srs.reviews.services import BATCH_LIMIT, MAX_DURATION_MS, ReviewInput, reviews_submit
from tests.support.anki_packages import (
    NoteSpec,
    ReviewRow,
    legacy_package,
    not_a_zip_package,
    package_card_ids,
    package_reviews_add,
    zip_bomb_package,
)
from tests.support.api import make_learner
from tests.support.reviews import load_balancing_off

GUIDS = ("anki-note-a", "anki-note-b", "anki-note-c")
# A note in the package that no card here came from.
STRANGER_GUID = "anki-note-elsewhere"
REVERSED_GUID = "anki-note-reversed"
START = datetime(2024, 1, 10, 9, tzinfo=UTC)
URL = "/api/v1/anki-history/"


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


@pytest.fixture
def anki_cards(deck_cards: list[Card]) -> dict[str, Card]:
    """Three of the shipped deck's cards, as if they had come from an Anki package's notes."""
    cards = {}
    for guid, card in zip(GUIDS, deck_cards, strict=False):
        Card.objects.filter(pk=card.pk).update(anki_guid=guid)
        cards[guid] = Card.objects.get(pk=card.pk)
    return cards


def _base_package() -> bytes:
    notes = [NoteSpec(guid, [f"term {guid}", f"definition {guid}"]) for guid in (*GUIDS, STRANGER_GUID)]
    notes.append(NoteSpec(REVERSED_GUID, ["front", "back"], kind="reversed"))
    return legacy_package(notes)


def _package(rows: list[tuple[str, int, dict[str, Any]]]) -> bytes:
    """The base package with revlog rows: (note GUID, index of the note's card, ReviewRow fields)."""
    base = _base_package()
    card_ids = package_card_ids(base)
    return package_reviews_add(
        base, [ReviewRow(card_id=card_ids[guid][index], **fields) for guid, index, fields in rows]
    )


def _history(guid: str, count: int, *, start: datetime = START, step: timedelta = timedelta(days=2)) -> list:
    ratings = (3, 3, 1, 3, 4, 2, 3)
    return [
        (guid, 0, {"id": _ms(start + step * index), "ease": ratings[index % len(ratings)], "kind": 1, "taken_ms": 4000})
        for index in range(count)
    ]


def _run(learner: Any, package: bytes) -> AnkiHistoryImport:
    row = anki_history_import_create(learner=learner, package=io.BytesIO(package), size=len(package))
    anki_history_import_run(import_id=row.pk, now=timezone.now())
    row.refresh_from_db()
    return row


def _memories(learner: Any) -> dict[int, tuple[Any, ...]]:
    return {
        memory.card_id: (
            memory.stage,
            memory.step,
            memory.stability,
            memory.difficulty,
            memory.due,
            memory.reps,
            memory.lapses,
            memory.last_review,
            memory.first_review,
        )
        for memory in CardMemory.objects.filter(learner=learner)
    }


def test_each_kind_of_entry_is_recorded_or_skipped_as_documented(learner, anki_cards):
    a = GUIDS[0]
    moments = [START + timedelta(days=day) for day in range(9)]
    package = _package(
        [
            (a, 0, {"id": _ms(moments[0]), "kind": 0, "ease": 3}),  # learn
            (a, 0, {"id": _ms(moments[1]), "kind": 1, "ease": 3}),  # review
            (a, 0, {"id": _ms(moments[2]), "kind": 2, "ease": 1}),  # relearn
            (a, 0, {"id": _ms(moments[3]), "kind": 3, "ease": 4, "factor": 2500}),  # filtered deck that reschedules
            (a, 0, {"id": _ms(moments[4]), "kind": 3, "ease": 3, "factor": 0}),  # cram: no rescheduling
            (a, 0, {"id": _ms(moments[5]), "kind": 4, "ease": 0}),  # manual (set due date, forget)
            (a, 0, {"id": _ms(moments[6]), "kind": 5, "ease": 0}),  # rescheduled
            (a, 0, {"id": _ms(moments[7]), "kind": 1, "ease": 0}),  # no answer button
            (a, 0, {"id": _ms(moments[8]), "kind": 9, "ease": 3}),  # a kind Anki does not write
        ]
    )
    row = _run(learner, package)
    assert row.status == JobStatus.DONE, row.error_message
    logs = list(ReviewLog.objects.filter(learner=learner).order_by("reviewed_at"))
    assert [(log.reviewed_at, log.rating) for log in logs] == [
        (moments[0], 3),
        (moments[1], 3),
        (moments[2], 1),
        (moments[3], 4),
    ]
    assert {log.card_id for log in logs} == {anki_cards[a].pk}
    assert row.applied == 4 and row.total_entries == 9 and row.matched == 9
    assert row.skipped == {
        SkipReason.CRAM: 1,
        SkipReason.MANUAL: 1,
        SkipReason.RESCHEDULED: 1,
        SkipReason.NO_ANSWER: 1,
        SkipReason.UNKNOWN_KIND: 1,
    }


def test_entries_of_other_cards_and_times_outside_the_services_era_are_counted_and_left_out(learner, anki_cards):
    a, b = GUIDS[0], GUIDS[1]
    Card.objects.filter(pk=anki_cards[b].pk).update(archived=True)
    future = timezone.now() + timedelta(hours=1)
    package = _package(
        [
            (a, 0, {"id": _ms(START), "taken_ms": 10 * MAX_DURATION_MS}),
            (a, 0, {"id": _ms(datetime(1999, 12, 31, 23, tzinfo=UTC))}),
            (a, 0, {"id": _ms(future)}),
            (b, 0, {"id": _ms(START + timedelta(days=1))}),  # its card is archived here
            (STRANGER_GUID, 0, {"id": _ms(START + timedelta(days=2))}),
            (REVERSED_GUID, 1, {"id": _ms(START + timedelta(days=3))}),
        ]
    )
    row = _run(learner, package)
    assert row.status == JobStatus.DONE
    assert row.total_entries == 6 and row.matched == 3 and row.applied == 1
    assert row.skipped == {
        SkipReason.BEFORE_2000: 1,
        SkipReason.IN_THE_FUTURE: 1,
        SkipReason.CARD_ARCHIVED: 1,
        SkipReason.CARD_NOT_MATCHED: 2,
    }
    (log,) = ReviewLog.objects.filter(learner=learner)
    # Anki caps an answer's time at a minute by default; a longer one is clamped to what a review may take.
    assert log.duration_ms == MAX_DURATION_MS
    assert log.client_review_id == anki_client_review_id(learner_id=learner.pk, revlog_id=_ms(START), guid=a)


def test_only_the_first_card_of_a_note_counts(learner, anki_cards):
    """A two-sided note's reverse card asks another question: its answers are not the card's here."""
    Card.objects.filter(pk=anki_cards[GUIDS[2]].pk).update(anki_guid=REVERSED_GUID)
    package = _package(
        [(REVERSED_GUID, 0, {"id": _ms(START)}), (REVERSED_GUID, 1, {"id": _ms(START + timedelta(hours=1))})]
    )
    row = _run(learner, package)
    assert row.applied == 1 and row.skipped == {SkipReason.OTHER_CARD_OF_NOTE: 1}
    assert ReviewLog.objects.get(learner=learner).reviewed_at == START


def _as_inputs(learner: Any, rows: list, cards: dict[str, Card]) -> list[ReviewInput]:
    return [
        ReviewInput(
            card_id=cards[guid].pk,
            rating=fields["ease"],
            client_review_id=anki_client_review_id(learner_id=learner.pk, revlog_id=fields["id"], guid=guid),
            reviewed_at=datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=fields["id"]),
            duration_ms=fields["taken_ms"],
        )
        for guid, _, fields in rows
    ]


def test_the_memory_is_the_one_submitting_the_same_reviews_gives_merged_with_reviews_made_here(learner, anki_cards):
    # Submitted per card or replayed in time order across cards, live reviews meet other due counts: a
    # balanced due date may differ by a day within the fuzz range, the memory states may not.
    load_balancing_off(learner)
    # More reviews than one batch takes, interleaved across three cards, so batches cut through every history.
    rows = [
        row for index, guid in enumerate(GUIDS) for row in _history(guid, 420, start=START + timedelta(hours=index))
    ]
    package = _package(rows)
    # A review made here, in the middle of card a's Anki history: the history merges around it.
    native = ReviewInput(
        card_id=anki_cards[GUIDS[0]].pk,
        rating=1,
        client_review_id=anki_client_review_id(learner_id=0, revlog_id=0, guid="native"),
        reviewed_at=START + timedelta(days=301, hours=5),
    )
    now = timezone.now()
    reviews_submit(learner=learner, reviews=[native], now=now)
    with transaction.atomic():
        for guid in GUIDS:
            reviews_submit(
                learner=learner, reviews=_as_inputs(learner, [r for r in rows if r[0] == guid], anki_cards), now=now
            )
        expected = _memories(learner)
        expected_logs = ReviewLog.objects.filter(learner=learner).count()
        transaction.set_rollback(True)
    assert ReviewLog.objects.filter(learner=learner).count() == 1

    row = _run(learner, package)
    assert row.status == JobStatus.DONE, row.error_message
    assert row.applied == len(rows) > BATCH_LIMIT
    assert row.progress_done == row.progress_total == len(rows)
    assert _memories(learner) == expected
    assert ReviewLog.objects.filter(learner=learner).count() == expected_logs


def test_uploading_the_same_history_again_changes_nothing(learner, anki_cards):
    package = _package(_history(GUIDS[0], 30) + _history(GUIDS[1], 12, start=START + timedelta(hours=1)))
    first = _run(learner, package)
    memories, logs = _memories(learner), ReviewLog.objects.filter(learner=learner).count()
    again = _run(learner, package)
    assert first.applied == 42 and again.applied == 0
    assert again.status == JobStatus.DONE
    assert again.skipped == {SkipReason.ALREADY_RECORDED: 42}
    assert _memories(learner) == memories
    assert ReviewLog.objects.filter(learner=learner).count() == logs


def test_a_run_cut_short_is_completed_by_running_it_again(learner, anki_cards):
    """What an interrupted import recorded stays; the next run of the same history records the rest, once."""
    rows = _history(GUIDS[0], 50)
    package = _package(rows)
    reviews_submit(learner=learner, reviews=_as_inputs(learner, rows[:20], anki_cards), now=timezone.now())
    row = _run(learner, package)
    assert row.applied == 30 and row.skipped == {SkipReason.ALREADY_RECORDED: 20}
    assert ReviewLog.objects.filter(learner=learner).count() == 50


def test_an_import_that_cannot_read_its_package_fails_with_the_reason_and_drops_the_package(learner, anki_cards):
    package = _package(_history(GUIDS[0], 3))
    row = anki_history_import_create(learner=learner, package=io.BytesIO(package), size=len(package))
    AnkiHistoryImport.objects.filter(pk=row.pk).update(package=b"no longer a zip archive")
    anki_history_import_run(import_id=row.pk, now=timezone.now())
    row.refresh_from_db()
    assert row.status == JobStatus.FAILED
    assert "not a zip archive" in row.error_message
    assert row.package is None and row.finished_at is not None
    # A task delivered again finds it finished and leaves it.
    assert anki_history_import_run(import_id=row.pk, now=timezone.now()) is None


# --- the endpoints --------------------------------------------------------------------------------------------


def _upload(client: Any, package: bytes, **extra: Any) -> Any:
    return client.post(URL, {"package": io.BytesIO(package)}, format="multipart", **extra)


def test_an_upload_is_queued_then_replayed_and_its_progress_reaches_its_total(
    learner, learner_client, anki_cards, django_capture_on_commit_callbacks
):
    package = _package([*_history(GUIDS[0], 5), (STRANGER_GUID, 0, {"id": _ms(START) + 1})])
    with django_capture_on_commit_callbacks() as callbacks:
        response = _upload(learner_client, package)
    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["status"] == "queued" and response["Location"] == body["url"] == f"{URL}{body['id']}/"
    # Handed to a worker by name once the upload commits; the worker's task runs the replay.
    assert [(callback.func, *callback.args) for callback in callbacks] == [
        (jobs_publish, ANKI_HISTORY_IMPORTS, [(body["id"], body["id"])])
    ]
    anki_history_import_run(import_id=body["id"], now=timezone.now())
    followed = learner_client.get(body["url"]).json()
    assert followed["status"] == "done"
    assert followed["progress_done"] == followed["progress_total"] == 5
    assert (followed["total_entries"], followed["matched"], followed["applied"]) == (6, 5, 5)
    assert followed["skipped"] == {SkipReason.CARD_NOT_MATCHED: 1}
    assert followed["error"] is None and followed["finished_at"] is not None
    assert AnkiHistoryImport.objects.get(pk=body["id"]).package is None
    assert ReviewLog.objects.filter(learner=learner).count() == 5


@pytest.mark.parametrize("hostile", [not_a_zip_package, zip_bomb_package, lambda: b""])
def test_a_file_that_is_no_readable_package_is_a_400_and_nothing_is_stored(learner_client, hostile):
    response = _upload(learner_client, hostile())
    assert response.status_code == 400, response.json()
    assert set(response.json()["error"]) == {"code", "message", "fields"}
    assert "package" in response.json()["error"]["fields"]
    assert not AnkiHistoryImport.objects.exists()


def test_a_package_over_the_limit_is_a_413_and_nothing_is_stored(learner_client, settings, anki_cards):
    package = _package(_history(GUIDS[0], 3))
    settings.ANKI_HISTORY_MAX_BYTES = len(package) - 1
    response = _upload(learner_client, package)
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"
    assert not AnkiHistoryImport.objects.exists()


def test_a_body_that_is_not_multipart_is_a_415(learner_client):
    response = learner_client.post(URL, {"package": "x"}, format="json")
    assert response.status_code == 415


def test_an_upload_larger_than_the_json_limit_reaches_the_view(learner_client, settings):
    """The upload has its own body limit, not the 256 KiB of JSON bodies."""
    response = _upload(learner_client, b"\0" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1))
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_package"


def test_imports_are_their_owners_alone(learner, learner_client, api_client, anki_cards):
    package = _package(_history(GUIDS[0], 2))
    row = anki_history_import_create(learner=learner, package=io.BytesIO(package), size=len(package))
    assert learner_client.get(f"{URL}{row.pk}/").status_code == 200
    _, other = make_learner("grace-hopper")
    response = other.get(f"{URL}{row.pk}/")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    assert other.get(f"{URL}{row.pk + 1000}/").status_code == 404
    assert api_client.get(f"{URL}{row.pk}/").status_code in {401, 403}
    assert _upload(api_client, package).status_code in {401, 403}


# --- imports no worker runs ---------------------------------------------------------------------------------------


def test_an_import_the_broker_did_not_take_stays_queued_and_is_handed_over_again(learner):
    from apps.common.jobs import jobs_recover, jobs_stalled
    from apps.interchange.jobs import ANKI_HISTORY_IMPORTS

    def anki_history_imports_stalled(*, now):
        return [pk for pk, _ in jobs_stalled(ANKI_HISTORY_IMPORTS, now=now)]

    history_package = _base_package()
    queued = AnkiHistoryImport.objects.create(learner=learner, package=history_package, package_bytes=1)
    running = AnkiHistoryImport.objects.create(
        learner=learner, package=history_package, package_bytes=1, status=JobStatus.RUNNING
    )
    now = timezone.now()
    # Fresh rows belong to the broker and to a live worker.
    assert anki_history_imports_stalled(now=now) == []
    later = now + ANKI_HISTORY_IMPORTS.republish_after + timedelta(seconds=1)
    assert anki_history_imports_stalled(now=later) == [queued.pk]
    assert jobs_recover(ANKI_HISTORY_IMPORTS, now=later).handed_over == 1
    # Handed over: left alone for another interval.
    assert anki_history_imports_stalled(now=later) == []
    much_later = later + ANKI_HISTORY_IMPORTS.stalled_after + timedelta(seconds=1)
    assert anki_history_imports_stalled(now=much_later) == [queued.pk, running.pk]
    assert AnkiHistoryImport.objects.get(pk=queued.pk).status == JobStatus.QUEUED
