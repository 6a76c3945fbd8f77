"""Images and sounds a course file ships in decks/media/: checked when the file loads, served by name."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.content.models import Card
from tests.support.course_files import minimal_course, write_course
from tests.support.media import png_bytes

pytestmark = pytest.mark.django_db


@pytest.fixture
def media_dir(tmp_path: Path, settings: Any) -> Path:
    folder = tmp_path / "media"
    folder.mkdir()
    (folder / "overlap.png").write_bytes(png_bytes(4, 3))
    (folder / "drawing.svg").write_bytes(b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
    settings.COURSE_MEDIA_DIR = folder
    return folder


def _with_image(source: str) -> dict[str, Any]:
    document = minimal_course()
    card = document["lessons"][0]["decks"][0]["cards"][0]
    card.update(format="html", definition=f'Work overlaps.<img src="{source}" alt="Two timelines overlapping">')
    return document


def _load(tmp_path: Path, document: dict[str, Any]) -> str:
    """The load's error output; empty when it loaded."""
    err = io.StringIO()
    with contextlib.suppress(CommandError):
        call_command("load_decks", str(write_course(tmp_path, document)), stdout=io.StringIO(), stderr=err)
    return err.getvalue()


def test_a_card_shows_an_image_its_course_ships(tmp_path, media_dir):
    assert _load(tmp_path, _with_image("/media/course/overlap.png")) == ""
    card = Card.objects.get(definition__contains="overlap.png")
    assert card.format == "html" and '<img src="/media/course/overlap.png"' in card.definition


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("/media/course/missing.png", "no file missing.png in the course media folder"),
        ("/media/course/drawing.svg", "not a PNG, JPEG, GIF or WebP image"),
        ("/media/course/.hidden.png", "not a plain file name"),
    ],
)
def test_media_a_course_does_not_ship_is_refused_with_the_card_and_nothing_loads(tmp_path, media_dir, source, reason):
    errors = _load(tmp_path, _with_image(source))
    assert "lessons[0].decks[0].cards[0].definition" in errors and reason in errors, errors
    assert not Card.objects.exists()


def test_course_media_is_served_as_an_image_only(client, media_dir):
    response = client.get("/media/course/overlap.png")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png" and response.content == png_bytes(4, 3)
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == "sandbox"
    assert client.get("/media/course/overlap.png", HTTP_IF_NONE_MATCH=response["ETag"]).status_code == 304
    assert client.head("/media/course/overlap.png").status_code == 200
    assert client.post("/media/course/overlap.png").status_code == 405
    for name in ("drawing.svg", "missing.png", "..%2Foverlap.png", ".hidden"):
        assert client.get(f"/media/course/{name}").status_code == 404, name
