"""The API's route table for docs/api.md, made from the schema the URL configuration gives."""

from __future__ import annotations

import re
from pathlib import Path

from drf_spectacular.generators import SchemaGenerator

ROUTES_BEGIN = "<!-- routes: made by `python manage.py api_routes --write`; a test checks it is current -->"
ROUTES_END = "<!-- /routes -->"
_METHODS = ("get", "post", "put", "patch", "delete")


def api_route_table() -> str:
    """A Markdown table: every path and method of the API, with its summary."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    rows = ["| Method | Path | What it does |", "|---|---|---|"]
    for path, operations in sorted(schema["paths"].items()):
        for method in _METHODS:
            if method in operations:
                summary = " ".join(str(operations[method].get("summary", "")).split()).replace("|", "\\|")
                rows.append(f"| {method.upper()} | `{path}` | {summary} |")
    return "\n".join(rows) + "\n"


def route_block_replace(page: str, table: str) -> str:
    """The page with the text between the route markers replaced by `table`."""
    pattern = re.compile(re.escape(ROUTES_BEGIN) + r"\n.*?" + re.escape(ROUTES_END), re.DOTALL)
    if not pattern.search(page):
        raise ValueError("the page has no route markers")
    return pattern.sub(lambda _: f"{ROUTES_BEGIN}\n{table}{ROUTES_END}", page)


def route_block_write(page_path: Path) -> bool:
    """Bring the page's route table up to date; says whether it changed."""
    page = page_path.read_text()
    updated = route_block_replace(page, api_route_table())
    if updated != page:
        page_path.write_text(updated)
    return updated != page
