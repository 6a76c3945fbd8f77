"""Collections built and studied by Anki's own library (`anki`, its Rust engine) for the parity tests.

`anki_study.py` runs in a child process under libfaketime, which moves that process's clock day by
day; the tests read the package it exports and what Anki computed of each card's memory.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

_STUDY_SCRIPT = Path(__file__).with_name("anki_study.py")
_LIBFAKETIME_PATHS = ("/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1")
# Studying 150 simulated days takes about a second; the limit only stops a hung engine.
_STUDY_TIMEOUT_S = 300


def libfaketime() -> str | None:
    for pattern in _LIBFAKETIME_PATHS:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def anki_collection_studied(out: Path, *, seed: int) -> dict[str, Any]:
    """Study a new collection in Anki over simulated days: what `anki_study.py` wrote, with the package bytes."""
    library = libfaketime()
    if importlib.util.find_spec("anki") is None or library is None:
        pytest.skip("the real-Anki tests need the anki package and libfaketime (Debian's faketime)")
    out.mkdir(parents=True, exist_ok=True)
    clock = out / "clock"
    clock.write_text("", encoding="utf-8")
    environment = {
        **os.environ,
        "TZ": "UTC",
        "LD_PRELOAD": library,
        "FAKETIME_TIMESTAMP_FILE": str(clock),
        "FAKETIME_NO_CACHE": "1",
    }
    subprocess.run(
        [sys.executable, str(_STUDY_SCRIPT), "study", str(out), str(seed)],
        env=environment,
        check=True,
        timeout=_STUDY_TIMEOUT_S,
        capture_output=True,
    )
    summary: dict[str, Any] = json.loads((out / "study.json").read_text(encoding="utf-8"))
    summary["package_bytes"] = Path(summary["package"]).read_bytes()
    summary["collection"] = str(out / "study.anki2")
    return summary


def _anki(*arguments: str) -> None:
    if importlib.util.find_spec("anki") is None:
        pytest.skip("the real-Anki tests need the anki package")
    subprocess.run(
        [sys.executable, str(_STUDY_SCRIPT), *arguments],
        env={**os.environ, "TZ": "UTC"},
        check=True,
        timeout=_STUDY_TIMEOUT_S,
        capture_output=True,
    )


def anki_import(collection: Path, package: bytes) -> dict[str, Any]:
    """Import a package into a collection with Anki's default options: what its import logged and what it holds."""
    folder = collection.parent
    folder.mkdir(parents=True, exist_ok=True)
    package_path = folder / f"incoming-{len(list(folder.glob('incoming-*')))}.apkg"
    package_path.write_bytes(package)
    report = folder / f"{package_path.stem}.json"
    _anki("import", str(collection), str(package_path), str(report))
    result: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return result


def anki_export(collection: Path) -> bytes:
    """The whole collection as Anki exports a deck to share: without scheduling, with media."""
    package = collection.parent / "from-anki.apkg"
    _anki("export", str(collection), str(package))
    return package.read_bytes()


def collection_copy(source: str, folder: Path) -> Path:
    """A copy of a collection file (and its media folder), to import into as the learner's own."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "collection.anki2"
    shutil.copyfile(source, target)
    media = Path(source).with_suffix(".media")
    if media.is_dir():
        shutil.copytree(media, target.with_suffix(".media"))
    return target
