"""The constellation's 3D layout: a seeded force-directed layout, normalised and rounded. Pure: no Django, no I/O.

The same concept slugs and links always give the same coordinates: nodes and edges enter networkx
in sorted order, the random start is seeded, and rounding hides floating-point noise.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

# Bumped when anything below changes the coordinates, so stored layouts are recomputed.
LAYOUT_VERSION = 1
SEED = 20_240_611
ITERATIONS = 200
# Coordinates fill the cube [-BOX_HALF, BOX_HALF] on their widest axis.
BOX_HALF = 1.0
DECIMALS = 4
# Stronger links pull their concepts closer: structure first, loose associations last.
KIND_WEIGHTS: dict[str, float] = {
    "part_of": 2.0,
    "prerequisite": 1.5,
    "enables": 1.5,
    "prevents": 1.0,
    "related": 0.7,
    "contrasts": 0.5,
}
DEFAULT_WEIGHT = 1.0

Position = tuple[float, float, float]
LinkKey = tuple[str, str, str]


def layout_digest(*, slugs: Iterable[str], links: Iterable[LinkKey]) -> str:
    """Fingerprint of everything a layout depends on: concepts, links and the layout's own parameters."""
    payload = {
        "version": LAYOUT_VERSION,
        "seed": SEED,
        "iterations": ITERATIONS,
        "weights": KIND_WEIGHTS,
        "concepts": sorted(slugs),
        "links": sorted(list(link) for link in links),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def layout_compute(*, slugs: Iterable[str], links: Iterable[LinkKey]) -> dict[str, Position]:
    """Coordinates of each concept, centred on the origin and scaled to the box.

    Links whose ends are not among the slugs are ignored; two links between the same pair of
    concepts (of different kinds) pull with their weights added.
    """
    nodes = sorted(set(slugs))
    if not nodes:
        return {}
    known = set(nodes)
    # Imported here: only computing a layout needs them, and the web process otherwise never loads NumPy.
    import networkx as nx
    import numpy as np

    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    for source, target, kind in sorted(set(links)):
        if source not in known or target not in known or source == target:
            continue
        weight = KIND_WEIGHTS.get(kind, DEFAULT_WEIGHT)
        if graph.has_edge(source, target):
            graph[source][target]["weight"] += weight
        else:
            graph.add_edge(source, target, weight=weight)
    raw = nx.spring_layout(graph, dim=3, seed=SEED, iterations=ITERATIONS, weight="weight")
    coordinates = np.array([raw[slug] for slug in nodes], dtype=float).reshape(len(nodes), 3)
    coordinates -= coordinates.mean(axis=0)
    extent = float(np.abs(coordinates).max())
    if extent > 0:
        coordinates *= BOX_HALF / extent
    # Adding 0.0 turns a rounded -0.0 into 0.0, so equal layouts also serialise identically.
    return {
        slug: (
            round(float(row[0]), DECIMALS) + 0.0,
            round(float(row[1]), DECIMALS) + 0.0,
            round(float(row[2]), DECIMALS) + 0.0,
        )
        for slug, row in zip(nodes, coordinates, strict=True)
    }
