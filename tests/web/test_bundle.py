"""The committed web bundle: what a first visit downloads before the page can paint."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from django.conf import settings

STATIC_WEB = Path(settings.BASE_DIR) / "apps" / "web" / "static" / "web"
# What a first paint may cost a learner on a slow phone connection.
FIRST_PAINT_BUDGET_GZIP_BYTES = 150 * 1024
# Static imports between the bundle's modules (`import"./x.js"`, `from"./x.js"`); `import("./x.js")`
# is a lazy page, loaded only where it is used, and does not match.
_STATIC_IMPORT = re.compile(r"""(?:\bfrom|\bimport)\s*["'](\./[^"']+\.js)["']""")


def first_paint_modules(entry: Path) -> set[Path]:
    """`entry` and every module it imports statically, directly or not."""
    seen: set[Path] = set()
    pending = [entry]
    while pending:
        module = pending.pop()
        if module in seen:
            continue
        seen.add(module)
        for relative in _STATIC_IMPORT.findall(module.read_text(encoding="utf-8")):
            pending.append((module.parent / relative).resolve())
    return seen


def test_static_imports_are_followed(tmp_path: Path) -> None:
    (tmp_path / "chunks").mkdir()
    (tmp_path / "app.js").write_text('import{a}from"./chunks/a.js";import"./chunks/b.js";import("./chunks/lazy.js")')
    (tmp_path / "chunks" / "a.js").write_text('import{c}from"./c.js";export const a=1')
    (tmp_path / "chunks" / "b.js").write_text("")
    (tmp_path / "chunks" / "c.js").write_text("export const c=1")
    (tmp_path / "chunks" / "lazy.js").write_text("")
    names = {path.name for path in first_paint_modules((tmp_path / "app.js").resolve())}
    assert names == {"app.js", "a.js", "b.js", "c.js"}


def test_first_paint_javascript_fits_the_budget() -> None:
    modules = first_paint_modules((STATIC_WEB / "app.js").resolve())
    assert all(module.is_relative_to(STATIC_WEB.resolve()) and module.exists() for module in modules)
    size = sum(len(gzip.compress(module.read_bytes(), compresslevel=9)) for module in modules)
    assert 0 < size <= FIRST_PAINT_BUDGET_GZIP_BYTES, f"{size} bytes gzipped in {sorted(m.name for m in modules)}"
