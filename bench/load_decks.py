"""Course-file loading at scale: first load, no-op reload, one-card edit and insert, with a deck API read.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/quizsite_bench python -m bench.load_decks [CARDS]
It creates (and afterwards drops) a test database, so it never touches real data.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.test_settings")

import django

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402


def main(cards: int) -> None:
    from django.contrib.auth import get_user_model
    from rest_framework.test import APIClient

    from apps.accounts.devices import device_token_issue
    from apps.content.content_files.load import content_sources_load, content_sources_read
    from tests.support.course_files import minimal_course, write_course

    document = minimal_course()
    deck = document["lessons"][0]["decks"][0]
    deck["cards"] += [
        {"slug": f"card-{i}", "term": f"term {i}", "definition": f"definition {i} " * 8} for i in range(cards)
    ]
    document["concepts"][0]["cards"] += [f"basics/card-{i}" for i in range(cards)]

    with tempfile.TemporaryDirectory() as folder:
        path = write_course(Path(folder), document)
        print(f"database: {connection.vendor}; file: {path.stat().st_size / 1e6:.1f} MB, {cards + 3} cards")

        def timed_load(label: str) -> None:
            started = time.perf_counter()
            report = content_sources_load(sources=content_sources_read([path]))
            cards_line = next(line for line in report.lines() if line.startswith("cards:"))
            print(f"{label:>22}: {time.perf_counter() - started:6.2f} s   ({cards_line})")

        timed_load("first load")
        timed_load("reload, no change")
        deck["cards"][cards // 2]["definition"] = "edited"
        write_course(Path(folder), document)
        timed_load("reload, one card edit")
        # Every card after it moves down one place: renumbered, not reported as changed.
        deck["cards"].insert(cards // 2, {"slug": "inserted", "term": "inserted", "definition": "new"})
        document["concepts"][0]["cards"].append("basics/inserted")
        write_course(Path(folder), document)
        timed_load("one card inserted")

    user = get_user_model().objects.create_user(username="bench", password="bench-password-1")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {device_token_issue(user=user, device_name=None).key}")
    samples = []
    for _ in range(30):
        started = time.perf_counter()
        response = client.get("/api/v1/decks/basics/cards/?page_size=200")
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200
    samples.sort()
    print(
        f"GET deck cards page (200 of {cards + 3}): p50 {statistics.median(samples):.1f} ms, "
        f"p90 {samples[int(len(samples) * 0.9)]:.1f} ms"
    )


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    old_config = setup_databases(verbosity=0, interactive=False)
    try:
        main(count)
    finally:
        teardown_databases(old_config, verbosity=0)
