"""Write a course's review log in the format memory_model_evaluate reads."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.content.models import Course
from apps.srs.adaptation.review_logs import course_review_log
from apps.srs.core.evaluation import revlog_split

COLUMNS = ("learner", "card", "reviewed_at", "rating", "duration_ms", "split")


class Command(BaseCommand):
    help = (
        "Export a course's standing reviews as a CSV review log (learner,card,reviewed_at,rating,duration_ms,split): "
        "learners under numbers of this export's own, cards as deck/card slugs, UTC times, and per learner about "
        "the last --test-fraction of their reviews marked test."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("course", help="The course's slug.")
        parser.add_argument("--output", type=Path, required=True, help="Where to write the log (CSV).")
        parser.add_argument(
            "--test-fraction", type=float, default=0.2, help="Share of each learner's reviews to test on."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        slug = options["course"]
        course = Course.objects.filter(slug=slug).first()
        if course is None:
            raise CommandError(f"No such course: {slug}")
        try:
            rows = revlog_split(list(course_review_log(course_id=course.pk)), test_fraction=options["test_fraction"])
        except ValueError as error:
            raise CommandError(str(error)) from None
        output = Path(options["output"])
        with output.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(COLUMNS)
            for review, split in rows:
                moment = review.reviewed_at.isoformat().replace("+00:00", "Z")
                duration = "" if review.duration_ms is None else str(review.duration_ms)
                writer.writerow((review.learner, review.card, moment, review.rating, duration, split))
        learners = len({review.learner for review, _ in rows})
        tested = sum(split == "test" for _, split in rows)
        self.stdout.write(f"wrote {len(rows):,} reviews of {learners:,} learners ({tested:,} to test on) to {output}")
