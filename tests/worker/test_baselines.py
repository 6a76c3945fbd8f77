"""The references' stored figures: kept per key, too old ones ignored, any change in the parts makes a new key."""

from __future__ import annotations

import time
from pathlib import Path

from worker.baselines import BaselineStore, ReferenceBaseline, baseline_key
from worker.grader import WORKER_DIR


def baseline(measured_at: float) -> ReferenceBaseline:
    return ReferenceBaseline(
        naive_seconds=1.2,
        expert_seconds=0.6,
        expert_vs_naive=2.0,
        figures={"naive": {"epoch_seconds": 1.2}, "expert": {"epoch_seconds": 0.6}},
        measured_at=measured_at,
        rounds=3,
    )


def test_a_stored_baseline_comes_back_until_it_is_too_old(tmp_path: Path):
    store = BaselineStore(tmp_path / "baselines")
    assert store.get("images", "k1", 3600) is None
    now = time.time()
    store.put("images", "k1", baseline(now))
    assert store.get("images", "k1", 3600) == baseline(now)
    assert store.get("images", "k2", 3600) is None
    store.put("images", "k1", baseline(time.time() - 7200))
    assert store.get("images", "k1", 3600) is None


def test_an_unreadable_file_is_no_baseline(tmp_path: Path):
    store = BaselineStore(tmp_path)
    (tmp_path / "images-k1.json").write_text("{not json")
    assert store.get("images", "k1", 3600) is None


def test_the_key_changes_with_every_part():
    parts = {"slug": "images", "spec": {"references": {"naive": "a", "expert": "b"}}, "cpus": [0, 1]}
    key = baseline_key(parts, WORKER_DIR)
    assert key == baseline_key(dict(parts), WORKER_DIR)
    assert key != baseline_key({**parts, "cpus": [0]}, WORKER_DIR)
    assert key != baseline_key({**parts, "spec": {"references": {"naive": "a", "expert": "c"}}}, WORKER_DIR)
