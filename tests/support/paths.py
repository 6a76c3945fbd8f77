"""Where the repository, its shipped course and the tests' fixture files are."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DECKS_DIR = REPO_ROOT / "decks"
