"""Agreement with Anki itself: collections studied by Anki's own scheduler, imported here with their history.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizsite_bench python -m bench.anki_parity [--seeds 5]
Needs the anki package and Debian's faketime. It creates (and afterwards drops) a test database. For each
seed, Anki studies a new collection for 150 simulated days (tests/support/anki_study.py: learning,
reviews, lapses, a Forget, Set due date, reviewing ahead, cramming); its package goes in here as a deck and
as a learner's review history, and each card's memory here is compared with what Anki computes from the
same revlog. Prints, over every card with a memory: stability's relative error, difficulty's absolute
error, and how the interval here (last review to due, in learner days) lies against Anki's own.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.test_settings")

import django

django.setup()

from django.utils import timezone  # noqa: E402

from bench.stack import bench_database  # noqa: E402

_REVIEW_TYPE = 2


def _quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"median {statistics.median(ordered):.2e}  p90 {p90:.2e}  max {ordered[-1]:.2e}  (n={len(ordered)})"


def _one_collection(seed: int, folder: Path) -> dict[str, list[float]]:
    from apps.content.content_files.load import content_sources_load
    from apps.content.content_files.source import ContentSource
    from apps.content.models import Card, Course, Lesson
    from apps.interchange.anki_history import anki_history_import_create, anki_history_import_run
    from apps.interchange.services import ImportSource, deck_import
    from apps.srs.core.scheduling import SchedulerConfig, fuzz_range, learner_days_between
    from apps.srs.models import CardMemory
    from apps.srs.settings.services import scheduling_settings_update
    from tests.support.api import learner_with_token
    from tests.support.course_files import minimal_course, to_yaml
    from tests.support.real_anki import anki_collection_studied

    studied = anki_collection_studied(folder, seed=seed)
    if not Course.objects.filter(slug="pipelines-101").exists():
        content_sources_load(sources=[ContentSource("course.yaml", to_yaml(minimal_course()))])
    deck_slug = f"from-anki-{seed}"
    deck_import(
        course=Course.objects.get(slug="pipelines-101"),
        lesson=Lesson.objects.get(slug="first-pipeline"),
        deck_slug=deck_slug,
        deck_title=None,
        source=ImportSource(name="study.apkg", file=io.BytesIO(studied["package_bytes"])),
        dry_run=False,
    )
    cards = {card.anki_guid: card for card in Card.objects.filter(deck__slug=deck_slug)}
    learner, _ = learner_with_token(f"anki-{seed}")
    changes: dict[str, Any] = {"timezone": "UTC", "day_start_hour": 4, "fsrs_parameters": studied["parameters"]}
    scheduling_settings_update(learner=learner, changes=changes)
    package = studied["package_bytes"]
    row = anki_history_import_create(learner=learner, package=io.BytesIO(package), size=len(package))
    anki_history_import_run(import_id=row.pk, now=timezone.now())
    config = SchedulerConfig(parameters=tuple(studied["parameters"]))
    moved = {studied["guids"][str(studied["special"][key])] for key in ("due_set", "due_set_last")}
    found: dict[str, list[float]] = {
        "stability": [],
        "difficulty": [],
        "interval_days_off": [],
        "in_range": [],
        "raised": [],
    }
    for anki_card in studied["cards"]:
        memory = CardMemory.objects.filter(learner=learner, card=cards[anki_card["guid"]]).first()
        if anki_card["stability"] is None or memory is None:
            continue
        found["stability"].append(abs(memory.stability - anki_card["stability"]) / anki_card["stability"])
        found["difficulty"].append(abs(memory.difficulty - anki_card["difficulty"]))
        if anki_card["type"] != _REVIEW_TYPE or anki_card["guid"] in moved:
            continue
        ours = learner_days_between(memory.last_review, memory.due, timezone="UTC", day_start_hour=4)
        found["interval_days_off"].append(abs(ours - anki_card["interval"]))
        unfuzzed = config.scheduler()._next_interval(stability=anki_card["stability"])
        low, high = fuzz_range(unfuzzed, maximum_interval=config.maximum_interval) or (unfuzzed, unfuzzed)
        # Anki's order (Good past Hard, Easy past Good) may raise its interval past the range; this side's as far.
        raised_in_anki = anki_card["interval"] > high
        found["raised"].append(float(raised_in_anki))
        found["in_range"].append(float(low <= ours <= max(high, anki_card["interval"])))
    return found


def main(seeds: int) -> None:
    totals: dict[str, list[float]] = {}
    with bench_database(), tempfile.TemporaryDirectory() as folder:
        for seed in range(1, seeds + 1):
            for name, values in _one_collection(seed, Path(folder) / str(seed)).items():
                totals.setdefault(name, []).extend(values)
    print(f"{seeds} collections studied by Anki 26.9.3 for 150 days each; every card with a memory here and there:")
    print(f"  stability, relative error:   {_quantiles(totals['stability'])}")
    print(f"  difficulty, absolute error:  {_quantiles(totals['difficulty'])}")
    print(f"  interval, days from Anki's:  {_quantiles(totals['interval_days_off'])}")
    in_range, raised = totals["in_range"], sum(totals["raised"])
    print(
        "  interval within the fuzz range of the interval Anki's stability gives, or no further past it than"
        f" Anki's order raised Anki's own ({raised:.0f} raised there): {sum(in_range):.0f}/{len(in_range)}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    main(parser.parse_args().seeds)
