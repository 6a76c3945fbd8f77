"""docs/api.md lists every route the API has, as the schema made from the URL configuration gives them."""

from __future__ import annotations

import pytest

from apps.common.routes import ROUTES_BEGIN, ROUTES_END, api_route_table, route_block_replace
from tests.support.paths import REPO_ROOT

API_PAGE = REPO_ROOT / "docs" / "api.md"


def test_the_route_table_in_the_docs_is_current():
    page = API_PAGE.read_text()
    assert route_block_replace(page, api_route_table()) == page, (
        "docs/api.md's route table is out of date: run `python manage.py api_routes --write`"
    )


def test_the_table_names_every_route_and_method():
    table = api_route_table()
    assert "| POST | `/api/v1/reviews/` |" in table
    assert "| GET | `/api/v1/decks/{slug}/study/` |" in table
    assert "| POST | `/api/v1/me/delete/` |" in table


def test_a_page_without_the_markers_is_refused():
    with pytest.raises(ValueError, match="no route markers"):
        route_block_replace("# A page\n", "| table |\n")
    replaced = route_block_replace(f"before\n{ROUTES_BEGIN}\nold\n{ROUTES_END}\nafter\n", "| new |\n")
    assert replaced == f"before\n{ROUTES_BEGIN}\n| new |\n{ROUTES_END}\nafter\n"
