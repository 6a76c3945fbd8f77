"""Exploring as the tests do: the shipped course's slugs and a constellation reader."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rest_framework.test import APIClient

from apps.explore.selectors import Constellation, constellation_get, course_graph_get
from apps.explore.services import constellation_layout_ensure

COURSE = "tensorflow-ai-phd"
SCENE = "input-pipeline-explorer"
REGION = "shuffle-buffer"
OTHER_REGION = "cache"


def constellation(client: APIClient, course: str = COURSE) -> dict[str, Any]:
    response = client.get(f"/api/v1/courses/{course}/constellation/")
    assert response.status_code == 200, response.content
    return response.json()


def coordinates(body: dict[str, Any]) -> dict[str, tuple[float, float, float]]:
    return {node["slug"]: (node["x"], node["y"], node["z"]) for node in body["nodes"]}


def visit(client: APIClient, region: str = REGION, scene: str = SCENE, **body: Any) -> Any:
    return client.post(f"/api/v1/explorer/{scene}/regions/{region}/visits/", body, format="json")


def constellation_of(*, course_slug: str = COURSE, learner: Any, now: datetime) -> Constellation:
    """The constellation as the endpoint makes it: the graph, its layout (stored when it changed), the mastery."""
    graph = course_graph_get(course_slug=course_slug)
    layout = constellation_layout_ensure(course=graph.course, slugs=graph.slugs, links=graph.link_keys, now=now)
    return constellation_get(graph=graph, layout=layout, learner=learner, now=now)
