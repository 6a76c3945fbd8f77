"""Exploring as the tests do: the shipped course's slugs and a constellation reader."""

from __future__ import annotations

from typing import Any

from rest_framework.test import APIClient

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
