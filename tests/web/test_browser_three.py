"""The concept constellation and the explorer in real Chromium (software WebGL): what shows, what is saved."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import pytest
from django.utils import timezone
from playwright.sync_api import expect
from rest_framework.test import APIClient

from apps.content.models import Concept, ConceptLink, ExplorerRegion
from apps.explore.models import RegionVisit
from tests.support.browser import DESKTOP, PHONE, Browsing, Viewport, browsing, fits_sideways

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.django_db(transaction=True)

COURSE = "tensorflow-ai-phd"
SCENE = "input-pipeline-explorer"


def _ready_viewer(web: Browsing) -> Any:
    viewer = web.page.locator(".three-viewer[data-ready='true']")
    viewer.wait_for(timeout=30_000)
    return viewer


def _project(viewer: Any, key: str) -> dict[str, float]:
    point = viewer.evaluate("(element, key) => element.quizsiteViewer.project(key)", key)
    assert point is not None, key
    return point


def _reduced_motion(chromium: Browser, base_url: str, viewport: Viewport) -> Browsing:
    """Like `browsing`, for a learner whose system asks for reduced motion."""
    return browsing(chromium, base_url, viewport, reduced_motion="reduce")


def _concepts() -> Any:
    return Concept.objects.filter(course__slug=COURSE, archived=False)


def test_the_constellation_draws_every_concept_and_a_click_shows_one(
    web: Browsing, shipped_course: None, token: str
) -> None:
    assert web.page.evaluate("!!document.createElement('canvas').getContext('webgl2')")
    web.sign_in_with_token(token)
    web.goto(f"/courses/{COURSE}/constellation")
    viewer = _ready_viewer(web)
    concepts = _concepts()
    links = ConceptLink.objects.filter(source__in=concepts, target__in=concepts)
    assert viewer.get_attribute("data-nodes") == str(concepts.count())
    assert viewer.get_attribute("data-links") == str(links.count())
    assert web.page.locator(".three-viewer canvas").count() == 1

    concept = concepts.order_by("slug")[0]
    point = _project(viewer, concept.slug)
    web.page.mouse.click(point["x"], point["y"])
    panel = web.page.locator(f".three-panel .concept-details[data-concept='{concept.slug}']")
    panel.wait_for()
    expect(viewer).to_have_attribute("data-selected", concept.slug)
    assert concept.definition.split()[0] in panel.inner_text()
    # The concept's cards come with their definitions from the card endpoint.
    card = concept.cards.order_by("pk")[0]
    panel.get_by_role("heading", name=card.term, exact=True).wait_for()

    # Arrow keys turn the view: the same concept is then drawn somewhere else.
    viewer.focus()
    web.page.keyboard.press("ArrowLeft")
    web.page.keyboard.press("ArrowLeft")
    assert _project(viewer, concept.slug) != point
    web.page.keyboard.press("+")
    web.page.keyboard.press("0")
    web.page.wait_for_function(
        "([slug, x, y]) => { const p = document.querySelector('.three-viewer').quizsiteViewer.project(slug);"
        " return Math.abs(p.x - x) < 1 && Math.abs(p.y - y) < 1; }",
        arg=[concept.slug, point["x"], point["y"]],
    )

    # The picker selects by keyboard alone.
    other = concepts.exclude(pk=concept.pk).order_by("name")[0]
    web.page.get_by_label("Concept", exact=True).select_option(other.slug)
    web.page.locator(f".three-panel .concept-details[data-concept='{other.slug}']").wait_for()
    expect(viewer).to_have_attribute("data-selected", other.slug)

    web.screenshot("constellation")
    assert web.axe_serious() == []
    fits_sideways(web)
    assert web.console_errors == []


def test_reduced_motion_gets_the_list_with_mastery_links_and_cards(
    chromium: Browser, live_server: Any, shipped_course: None, learner: Any, token: str
) -> None:
    concept = _concepts().filter(cards__isnull=False).order_by("slug")[0]
    card = concept.cards.order_by("pk")[0]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    review = {
        "card": card.pk,
        "rating": 3,
        "duration_ms": 4000,
        "reviewed_at": timezone.now().isoformat(),
        "client_review_id": str(uuid.uuid4()),
    }
    assert api.post("/api/v1/reviews/", review, format="json").status_code == 201

    for viewport in (PHONE, DESKTOP):
        web = _reduced_motion(chromium, live_server.url, viewport)
        try:
            web.sign_in_with_token(token)
            web.goto(f"/courses/{COURSE}/constellation")
            items = web.page.locator(".concept-list > li")
            items.first.wait_for()
            assert items.count() == _concepts().count()
            assert web.page.locator(".three-viewer").count() == 0
            item = web.page.locator(f".concept-item[data-concept='{concept.slug}']")
            # The reviewed card counts as studied: the concept is no longer grey.
            assert "1 of" in item.inner_text()
            assert item.locator(".three-swatch.band-unstudied").count() == 0
            item.get_by_role("button", name=concept.name).click()
            item.get_by_role("heading", name=card.term, exact=True).wait_for()
            assert concept.definition.split()[0] in item.inner_text()
            web.screenshot("constellation-list")
            assert web.axe_serious() == []
            fits_sideways(web)
            # The 3D view stays one press away.
            web.page.get_by_role("button", name="Show in 3D").click()
            _ready_viewer(web)
            assert web.console_errors == []
        finally:
            web.close()


def test_the_explorer_loads_its_model_and_a_chosen_region_is_a_recorded_visit(
    web: Browsing, shipped_course: None, learner: Any, token: str
) -> None:
    regions = ExplorerRegion.objects.filter(scene__slug=SCENE, archived=False)
    web.sign_in_with_token(token)
    with web.page.expect_response(lambda response: response.url.endswith(".glb")) as model:
        web.goto(f"/explorer/{SCENE}")
    assert model.value.status == 200
    viewer = _ready_viewer(web)
    assert viewer.get_attribute("data-regions") == str(regions.count())

    # From the list, by keyboard.
    first = regions.order_by("position")[0]
    button = web.page.locator(f".region-button[data-region='{first.slug}']")
    button.focus()
    with web.page.expect_response(lambda response: "/visits/" in response.url) as posted:
        web.page.keyboard.press("Enter")
    assert posted.value.status == 201
    panel = web.page.locator(f".region-details[data-region='{first.slug}']")
    panel.wait_for()
    card = first.cards.order_by("pk")[0]
    panel.get_by_role("heading", name=card.term, exact=True).wait_for()
    button.locator(".region-visited").wait_for()
    assert RegionVisit.objects.filter(learner=learner, region=first).count() == 1

    # In the model: hovering lights a region up, clicking opens it.
    last = regions.order_by("-position")[0]
    viewer.scroll_into_view_if_needed()
    point = _project(viewer, last.slug)
    # Seen from a front corner, the row of stages runs down the scene as well as across it.
    start = _project(viewer, first.slug)
    scene = viewer.bounding_box()
    assert scene is not None
    assert abs(point["y"] - start["y"]) > 0.15 * scene["height"]
    assert abs(point["x"] - start["x"]) > 0.4 * scene["width"]
    web.page.mouse.move(point["x"], point["y"])
    web.page.wait_for_function(
        "slug => document.querySelector('.three-viewer').dataset.hovered === slug", arg=last.slug
    )
    with web.page.expect_response(lambda response: "/visits/" in response.url) as posted:
        web.page.mouse.click(point["x"], point["y"])
    assert posted.value.status == 201
    web.page.locator(f".region-details[data-region='{last.slug}']").wait_for()
    expect(viewer).to_have_attribute("data-selected", last.slug)
    assert RegionVisit.objects.filter(learner=learner, region=last).count() == 1
    assert RegionVisit.objects.filter(learner=learner).count() == 2

    web.screenshot("explorer")
    assert web.axe_serious() == []
    fits_sideways(web)
    assert web.console_errors == []


def test_on_a_touch_screen_a_vertical_swipe_over_the_scene_scrolls_the_page(
    chromium: Browser, live_server: Any, shipped_course: None, token: str
) -> None:
    web = browsing(chromium, live_server.url, PHONE, has_touch=True, is_mobile=True)
    try:
        web.sign_in_with_token(token)
        web.goto(f"/courses/{COURSE}/constellation")
        _ready_viewer(web)
        canvas = web.page.locator(".three-viewer canvas")
        # The browser keeps vertical pans (page scrolling); sideways drags still reach the orbit controls.
        assert canvas.evaluate("(element) => getComputedStyle(element).touchAction") == "pan-y"
        assert web.console_errors == []
    finally:
        web.close()
    desktop = browsing(chromium, live_server.url, DESKTOP)
    try:
        desktop.sign_in_with_token(token)
        desktop.goto(f"/courses/{COURSE}/constellation")
        _ready_viewer(desktop)
        # With a mouse, every drag over the scene is the scene's.
        touch = desktop.page.locator(".three-viewer canvas").evaluate("(e) => getComputedStyle(e).touchAction")
        assert touch == "none"
    finally:
        desktop.close()


SHOWN_LABELS = """
(viewer) => {
    const scene = viewer.querySelector("canvas").getBoundingClientRect();
    const shown = [...viewer.querySelectorAll(".three-label")]
        .filter((label) => !label.classList.contains("is-crowded"))
        .map((label) => label.getBoundingClientRect())
        .filter((rect) => rect.width > 0 && rect.height > 0);
    const overlapping = shown.filter((a, i) => shown.some((b, j) => j > i
        && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)).length;
    const outside = shown.filter((rect) => rect.left < scene.left || rect.right > scene.right
        || rect.top < scene.top || rect.bottom > scene.bottom).length;
    return { shown: shown.length, overlapping, outside, total: viewer.querySelectorAll(".three-label").length };
}
"""


def test_the_constellations_labels_never_overlap_nor_run_past_its_edge(
    desktop: Browsing, shipped_course: None, token: str
) -> None:
    web = desktop
    web.sign_in_with_token(token)
    web.goto(f"/courses/{COURSE}/constellation")
    viewer = _ready_viewer(web)
    web.page.wait_for_function("() => document.querySelectorAll('.three-label').length > 0")
    labels = viewer.evaluate(SHOWN_LABELS)
    web.screenshot("constellation-labels")
    assert labels["overlapping"] == 0 and labels["outside"] == 0, labels
    # Crowding hides some, not most: the scene still names a good part of its concepts.
    assert labels["shown"] >= labels["total"] // 3, labels
    # A hidden label is shown while its concept is pointed at.
    crowded = viewer.evaluate(
        "(viewer) => [...viewer.querySelectorAll('.three-label.is-crowded')].map((label) => label.textContent)"
    )
    concept = _concepts().filter(name__in=crowded).first()
    if concept is not None:
        point = _project(viewer, concept.slug)
        web.page.mouse.move(point["x"], point["y"])
        hovered = viewer.locator(".three-label.is-hovered")
        hovered.wait_for()
        assert "is-crowded" not in (hovered.get_attribute("class") or "")
    assert web.console_errors == []
