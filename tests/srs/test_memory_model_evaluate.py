"""`manage.py memory_model_evaluate`: models trained on a log's train rows, scored on its test rows."""

from __future__ import annotations

import csv
import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from io import StringIO
from itertools import pairwise
from pathlib import Path

import fsrs_rs_python
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.srs.core import evaluation
from apps.srs.core.evaluation import FEW_REVIEWS, MODELS, course_weights, research_day, revlog_rows
from apps.srs.core.optimizer import (
    MIN_REVIEWS_TO_FIT,
    LoggedReview,
    RecallPrediction,
    fsrs_items_from_reviews,
    long_term_item_count,
    parameters_fit,
    predictions_auc,
)

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
COLUMNS = ["learner", "card", "reviewed_at", "rating", "duration_ms", "split", "ignored"]


def _log(*, learners: int = 3, cards: int = 60, seed: int = 7, test_from_day: int = 40) -> list[dict[str, str]]:
    """Learners reviewing cards at growing intervals; reviews from `test_from_day` on are the test split."""
    rng = random.Random(seed)  # noqa: S311 - a simulated review log, not a secret
    rows = []
    for learner in range(learners):
        for card in range(cards):
            day, gap = rng.randrange(5), 1
            while day < 70:
                rating = 1 if rng.random() < 0.15 else rng.choice((2, 3, 3, 3, 4))
                moment = START + timedelta(days=day, minutes=rng.randrange(600))
                rows.append(
                    {
                        "learner": f"learner-{learner}",
                        "card": f"card-{card}",
                        "reviewed_at": moment.isoformat().replace("+00:00", "Z"),
                        "rating": str(rating),
                        "duration_ms": "4000",
                        "split": "test" if day >= test_from_day else "train",
                        "ignored": "x",
                    }
                )
                gap = 1 if rating == 1 else gap * 2 + rng.randrange(2)
                day += gap
    return rows


def _write(path: Path, rows: list[dict[str, str]], columns: list[str] = COLUMNS) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def _evaluate(tmp_path: Path, rows: list[dict[str, str]], name: str = "log") -> tuple[list[dict[str, str]], str]:
    output = tmp_path / f"{name}-predictions.csv"
    printed = StringIO()
    call_command(
        "memory_model_evaluate", str(_write(tmp_path / f"{name}.csv", rows)), output=str(output), stdout=printed
    )
    with output.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle)), printed.getvalue()


def test_every_model_predicts_each_test_review_after_an_earlier_day_and_is_scored(tmp_path):
    newcomer = [dict(row, learner="newcomer") for row in _log(learners=1, cards=6, seed=3)]
    rows = _log() + newcomer
    predictions, printed = _evaluate(tmp_path, rows)
    days_by_card: dict[tuple[str, str], list[tuple[datetime, str]]] = {}
    for row in rows:
        moment = datetime.fromisoformat(row["reviewed_at"])
        days_by_card.setdefault((row["learner"], row["card"]), []).append((moment, row["split"]))
    expected = set()
    for key, history in days_by_card.items():
        history.sort()
        for (before, _), (moment, split) in pairwise(history):
            if split == "test" and (moment - timedelta(hours=4)).date() > (before - timedelta(hours=4)).date():
                expected.add((*key, moment.isoformat().replace("+00:00", "Z")))
    assert expected
    for model in MODELS:
        written = {(p["learner"], p["card"], p["reviewed_at"]) for p in predictions if p["model"] == model}
        assert written == expected, model
    assert all(0 < float(p["p_recall"]) < 1 for p in predictions)
    for model in MODELS:
        assert "all learners" in printed and model in printed
    few = [line for line in printed.splitlines() if line.startswith(f"fewer than {FEW_REVIEWS} training reviews")]
    assert len(few) == len(MODELS)
    assert all(line.split()[6] == "1" for line in few), few  # the newcomer alone
    assert "log loss" in printed and "RMSE(bins)" in printed and "AUC" in printed


def test_models_learn_from_the_train_rows_only(tmp_path):
    rows = _log()
    flipped = [
        dict(row, rating="1" if row["rating"] != "1" else "3") if row["split"] == "test" else row for row in rows
    ]
    first, _ = _evaluate(tmp_path, rows, "first")
    second, _ = _evaluate(tmp_path, flipped, "flipped")
    # A card's first test review is predicted from train rows alone: other test rows cannot move it.
    firsts: dict[tuple[str, str, str], str] = {}
    for prediction in sorted(first, key=lambda p: p["reviewed_at"]):
        firsts.setdefault((prediction["learner"], prediction["card"], prediction["model"]), prediction["reviewed_at"])

    def of(predictions: list[dict[str, str]]) -> dict[tuple[str, str, str], str]:
        return {
            (p["learner"], p["card"], p["model"]): p["p_recall"]
            for p in predictions
            if firsts.get((p["learner"], p["card"], p["model"])) == p["reviewed_at"]
        }

    assert of(first) == of(second)
    fitted = {p["p_recall"] for p in first if p["model"] == "fsrs6-learner"}
    defaults = {p["p_recall"] for p in first if p["model"] == "fsrs6-default"}
    assert fitted != defaults  # the learner's own fit is not the defaults


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda rows, columns: (rows, [c for c in columns if c != "split"]), "lacks the column(s) split"),
        (lambda rows, columns: ([dict(rows[0], reviewed_at="yesterday")], columns), "Line 2: reviewed_at"),
        (lambda rows, columns: ([dict(rows[0], reviewed_at="2026-01-05T09:00:00")], columns), "has no offset"),
        (lambda rows, columns: ([rows[0], dict(rows[1], rating="5")], columns), "Line 3: rating '5'"),
        (lambda rows, columns: ([dict(rows[0], split="holdout")], columns), "split 'holdout'"),
        (lambda rows, columns: ([dict(rows[0], card="")], columns), "card is empty"),
        (lambda rows, columns: ([], columns), "has no reviews"),
    ],
)
def test_a_log_that_cannot_be_read_is_refused_by_line(tmp_path, change, message):
    rows, columns = change(_log(learners=1, cards=2), list(COLUMNS))
    source = _write(tmp_path / "bad.csv", rows, columns)
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call_command("memory_model_evaluate", str(source), output=str(tmp_path / "out.csv"), stdout=StringIO())


def _predicted(*pairs: tuple[float, float]) -> list[RecallPrediction]:
    return [RecallPrediction(predicted=p, recalled=r, bin=(0.0, 0.0, 0.0)) for p, r in pairs]


def test_auc_is_the_chance_a_recalled_review_was_predicted_above_a_forgotten_one():
    assert predictions_auc(_predicted((0.9, 1), (0.8, 1), (0.3, 0))) == 1.0
    assert predictions_auc(_predicted((0.2, 1), (0.8, 0))) == 0.0
    assert predictions_auc(_predicted((0.5, 1), (0.5, 0))) == 0.5
    assert predictions_auc(_predicted((0.9, 1), (0.4, 0), (0.6, 0), (0.5, 1))) == 0.75
    assert predictions_auc(_predicted((0.9, 1), (0.4, 1))) is None


def test_a_course_log_exports_its_standing_reviews_under_pseudonyms_and_scores(tmp_path, learner_client, deck_cards):
    from tests.support.api import make_learner
    from tests.support.reviews import post_review, review_body

    _, other_client = make_learner("brian")
    made = 0
    last: dict[str, object] = {}
    for client, offset in ((learner_client, 0), (other_client, 3)):
        for card in deck_cards[:6]:
            for day in (0, 1, 4, 10, 25, 50):
                at = START + timedelta(days=day + offset, hours=card.pk % 5)
                response = post_review(client, review_body(card, 3 if (day + card.pk + offset) % 5 else 1, at))
                assert response.status_code in (200, 201), response.json()
                last = response.json()
                made += 1
    # The latest review undone: it no longer stands.
    assert other_client.post(f"/api/v1/reviews/{last['id']}/undo/").status_code == 200
    course = deck_cards[0].deck.lesson.course.slug
    log = tmp_path / "course.csv"
    call_command("memory_model_export", course, output=str(log), stdout=StringIO())
    with log.open(encoding="utf-8", newline="") as handle:
        exported = list(csv.DictReader(handle))
    assert len(exported) == made - 1
    assert {row["learner"] for row in exported} == {"learner-1", "learner-2"}
    assert not {"ada", "brian"} & {row["learner"] for row in exported}
    assert {row["card"] for row in exported} == {f"{card.deck.slug}/{card.slug}" for card in deck_cards[:6]}
    for pseudonym in ("learner-1", "learner-2"):
        rows = sorted((row for row in exported if row["learner"] == pseudonym), key=lambda row: row["reviewed_at"])
        splits = [row["split"] for row in rows]
        # Train first, then test, split on a day boundary (04:00 UTC).
        assert splits == sorted(splits, key=lambda split: split == "test") and "test" in splits
        last_train = max(datetime.fromisoformat(row["reviewed_at"]) for row in rows if row["split"] == "train")
        first_test = min(datetime.fromisoformat(row["reviewed_at"]) for row in rows if row["split"] == "test")
        assert (last_train - timedelta(hours=4)).date() < (first_test - timedelta(hours=4)).date()
    printed = StringIO()
    call_command("memory_model_evaluate", str(log), output=str(tmp_path / "predictions.csv"), stdout=printed)
    assert "fsrs6-learner" in printed.getvalue()


def test_exporting_an_unknown_course_is_refused(tmp_path, shipped_course):
    with pytest.raises(CommandError, match="No such course: nope"):
        call_command("memory_model_export", "nope", output=str(tmp_path / "out.csv"), stdout=StringIO())


def test_a_card_every_learner_forgets_is_predicted_lower_by_the_population_model(tmp_path):
    rows = _log(learners=4, cards=30, seed=5)
    hard = [dict(row, rating="1") if row["card"] == "card-0" else row for row in rows]
    predictions, printed = _evaluate(tmp_path, hard)
    for model in MODELS:
        assert model in printed

    def mean(model: str, card: str) -> float:
        chosen = [float(p["p_recall"]) for p in predictions if p["model"] == model and p["card"] == card]
        assert chosen
        return sum(chosen) / len(chosen)

    assert mean("fsrs6-population", "card-0") < mean("fsrs6-course", "card-0") - 0.05


def _items_of(rows: list[dict[str, str]]) -> dict[str, list[fsrs_rs_python.FSRSItem]]:
    """Each learner's histories as a fit reads them."""
    by_learner: dict[str, list[LoggedReview]] = {}
    for row in revlog_rows(rows, columns=COLUMNS):
        by_learner.setdefault(row.learner, []).append(
            LoggedReview(card_id=int(row.card.removeprefix("card-")), reviewed_at=row.reviewed_at, rating=row.rating)
        )
    return {
        learner: fsrs_items_from_reviews(reviews, day_start=partial(research_day, learner))
        for learner, reviews in by_learner.items()
    }


def test_the_course_weights_are_the_median_of_the_fits_of_learners_with_enough_reviews():
    items = _items_of(
        _log(learners=3, cards=90, seed=5)
        + [dict(row, learner="newcomer") for row in _log(learners=1, cards=8, seed=9)]
    )
    assert all(long_term_item_count(items[f"learner-{n}"]) >= MIN_REVIEWS_TO_FIT for n in range(3))
    assert long_term_item_count(items["newcomer"]) < MIN_REVIEWS_TO_FIT
    fits = [parameters_fit(items[f"learner-{n}"]) for n in range(3)]

    course = course_weights(items)

    assert course == tuple(sorted(weights)[1] for weights in zip(*fits, strict=True))
    # The newcomer's few reviews leave it as it is, and it is not one fit of everyone's reviews pooled.
    assert course == course_weights({learner: found for learner, found in items.items() if learner != "newcomer"})
    assert course != parameters_fit([item for found in items.values() for item in found])


def test_with_too_few_learners_to_take_a_median_the_course_weights_are_one_fit_of_every_review():
    items = _items_of(_log(learners=2, cards=90, seed=5))
    assert all(long_term_item_count(found) >= MIN_REVIEWS_TO_FIT for found in items.values())

    assert course_weights(items) == parameters_fit([item for found in items.values() for item in found])


def test_past_the_most_learners_fitted_the_course_weights_are_the_median_of_a_sample_that_stays_the_same(
    monkeypatch,
):
    items = _items_of(_log(learners=4, cards=90, seed=5))
    fits = {learner: parameters_fit(found) for learner, found in items.items()}
    fitted: list[int] = []

    def counted(found: Sequence[fsrs_rs_python.FSRSItem]) -> tuple[float, ...]:
        fitted.append(len(found))
        return parameters_fit(found)

    monkeypatch.setattr(evaluation, "parameters_fit", counted)
    monkeypatch.setattr(evaluation, "CENTRE_MAX_LEARNERS", 3)

    course = course_weights(items)

    assert len(fitted) == 3
    samples = [
        tuple(
            sorted(weights)[1] for weights in zip(*(fits[learner] for learner in items if learner != left), strict=True)
        )
        for left in items
    ]
    assert course in samples
    # The same learners whatever order they come in.
    assert course_weights(dict(reversed(items.items()))) == course
