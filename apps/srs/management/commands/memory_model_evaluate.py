"""Score every memory model on a review log: train on its `train` rows, predict its `test` rows."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.srs.core.evaluation import (
    FEW_REVIEWS,
    RevlogInvalid,
    revlog_evaluate,
    revlog_rows,
    scores,
)

OUTPUT_COLUMNS = ("learner", "card", "reviewed_at", "model", "p_recall")


class Command(BaseCommand):
    help = (
        "Read a review log (CSV: learner,card,reviewed_at,rating,duration_ms,split; RFC 3339 UTC times; a day "
        "starts at 04:00; split is train or test), train every model on the train rows, predict each test "
        "review whose card was reviewed on an earlier day, write the predictions and print log loss, "
        f"RMSE(bins) and AUC per model, for all learners and for those with fewer than {FEW_REVIEWS} training reviews."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("revlog", type=Path, help="The review log to read (CSV with a header).")
        parser.add_argument("--output", type=Path, required=True, help="Where to write the predictions (CSV).")

    def handle(self, *args: Any, **options: Any) -> None:
        source = Path(options["revlog"])
        try:
            with source.open(encoding="utf-8", newline="") as handle:
                reader = csv.DictReader(handle)
                rows = revlog_rows(reader, columns=reader.fieldnames or [])
        except OSError as error:
            raise CommandError(f"Cannot read {source}: {error.strerror or error}") from None
        except UnicodeDecodeError:
            raise CommandError(f"{source} is not UTF-8 text.") from None
        except (RevlogInvalid, csv.Error) as error:
            raise CommandError(f"{source}: {error}") from None
        if not rows:
            raise CommandError(f"{source} has no reviews.")
        predictions = revlog_evaluate(rows)
        output = Path(options["output"])
        with output.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(OUTPUT_COLUMNS)
            for found in predictions:
                moment = found.reviewed_at.isoformat().replace("+00:00", "Z")
                writer.writerow((found.learner, found.card, moment, found.model, f"{found.prediction.predicted:.6f}"))
        learners = len({row.learner for row in rows})
        self.stdout.write(
            f"{len(rows):,} reviews of {learners:,} learners; {len(predictions):,} predictions written to {output}"
        )
        header = (
            f"{'group':<36} {'model':<18} {'learners':>8} {'reviews':>8} {'log loss':>9} {'RMSE(bins)':>10} {'AUC':>7}"
        )
        self.stdout.write(header)
        for score in scores(predictions, rows):
            if score.metrics is None:
                self.stdout.write(f"{score.group:<36} {score.model:<18} {0:>8} {0:>8} {'-':>9} {'-':>10} {'-':>7}")
                continue
            auc = "-" if score.auc is None else f"{score.auc:.4f}"
            self.stdout.write(
                f"{score.group:<36} {score.model:<18} {score.learners:>8,} {score.metrics.reviews:>8,} "
                f"{score.metrics.log_loss:>9.4f} {score.metrics.rmse_bins:>10.4f} {auc:>7}"
            )
        self.stdout.write(
            "RMSE(bins): predictions grouped by interval, review number and lapse count on log scales, as "
            "srs-benchmark bins them; a review counts as recalled unless rated Again."
        )
