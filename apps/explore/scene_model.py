"""The explorer scene's 3D model as glTF 2.0 binary: one named box per region. Pure: no Django, no I/O.

A client maps a click to a region through the node's name, which is the region's slug as the scene
endpoint returns it. The same regions always give the same bytes: everything is laid out in the
given order, numbers are rounded, and the JSON is written in one fixed key order.
"""

from __future__ import annotations

import colorsys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pygltflib

# Bumped when anything below changes the geometry or the file layout.
MODEL_VERSION = 1
GENERATOR = f"quizsite explorer scene model v{MODEL_VERSION}"
# Boxes stand along the x axis in pipeline order, this far apart centre to centre, with a gap between.
SPACING = 1.6
BOX_SIZE = (1.0, 0.5, 1.0)
DECIMALS = 4
# Hues run from blue (where the data comes from) to red (what the model receives), so the colours
# read as the direction of the flow.
FIRST_HUE = 2 / 3
LAST_HUE = 0.0
SATURATION = 0.55
LIGHTNESS = 0.55
# A matte, non-metallic look: colour tells the stages apart, not reflections.
METALLIC = 0.0
ROUGHNESS = 0.8


@dataclass(frozen=True)
class ModelRegion:
    slug: str
    title: str


# The 6 faces of a box centred on the origin: outward normal, and two axes spanning the face such that
# normal = u x v, so every triangle winds counter-clockwise seen from outside (glTF's front face).
_FACES: tuple[tuple[tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]], ...] = (
    ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
    ((-1, 0, 0), (0, 0, 1), (0, 1, 0)),
    ((0, 1, 0), (0, 0, 1), (1, 0, 0)),
    ((0, -1, 0), (1, 0, 0), (0, 0, 1)),
    ((0, 0, 1), (1, 0, 0), (0, 1, 0)),
    ((0, 0, -1), (0, 1, 0), (1, 0, 0)),
)


def _box_geometry() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions and normals (4 vertices per face, so edges stay sharp) and the triangle indices."""
    half = np.array(BOX_SIZE, dtype=np.float32) / 2
    positions: list[np.ndarray] = []
    normals: list[tuple[int, int, int]] = []
    indices: list[int] = []
    for normal, u, v in _FACES:
        n, a, b = (np.array(axis, dtype=np.float32) for axis in (normal, u, v))
        start = len(positions)
        for su, sv in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
            positions.append((n + su * a + sv * b) * half)
            normals.append(normal)
        indices += [start, start + 1, start + 2, start, start + 2, start + 3]
    # glTF buffers are little-endian whatever the machine that writes them.
    return (
        np.array(positions, dtype="<f4"),
        np.array(normals, dtype="<f4"),
        np.array(indices, dtype="<u2"),
    )


def region_colour(*, index: int, count: int) -> list[float]:
    """RGBA base colour of the index-th of count regions, evenly spaced along the hue span."""
    fraction = index / (count - 1) if count > 1 else 0.0
    red, green, blue = colorsys.hls_to_rgb(FIRST_HUE + (LAST_HUE - FIRST_HUE) * fraction, LIGHTNESS, SATURATION)
    return [round(red, DECIMALS), round(green, DECIMALS), round(blue, DECIMALS), 1.0]


def scene_model_build(*, name: str, regions: Sequence[ModelRegion]) -> bytes:
    """The GLB file of a scene: one mesh and one node per region, named by the region's slug, in order."""
    if not regions:
        raise ValueError("A scene model needs at least one region.")
    slugs = [region.slug for region in regions]
    if len(set(slugs)) != len(slugs):
        raise ValueError(f"Region slugs repeat: {', '.join(sorted({s for s in slugs if slugs.count(s) > 1}))}.")

    positions, normals, indices = _box_geometry()
    chunks = [indices.tobytes(), positions.tobytes(), normals.tobytes()]
    blob = bytearray()
    views: list[pygltflib.BufferView] = []
    targets = [pygltflib.ELEMENT_ARRAY_BUFFER, pygltflib.ARRAY_BUFFER, pygltflib.ARRAY_BUFFER]
    for chunk, target in zip(chunks, targets, strict=True):
        views.append(pygltflib.BufferView(buffer=0, byteOffset=len(blob), byteLength=len(chunk), target=target))
        blob += chunk
        # Every accessor's data starts on a 4-byte boundary, as the specification requires for floats.
        blob += b"\0" * (-len(blob) % 4)

    accessors = [
        pygltflib.Accessor(
            bufferView=0,
            componentType=pygltflib.UNSIGNED_SHORT,
            count=len(indices),
            type=pygltflib.SCALAR,
            min=[int(indices.min())],
            max=[int(indices.max())],
        ),
        pygltflib.Accessor(
            bufferView=1,
            componentType=pygltflib.FLOAT,
            count=len(positions),
            type=pygltflib.VEC3,
            min=[float(value) for value in positions.min(axis=0)],
            max=[float(value) for value in positions.max(axis=0)],
        ),
        pygltflib.Accessor(
            bufferView=2,
            componentType=pygltflib.FLOAT,
            count=len(normals),
            type=pygltflib.VEC3,
            min=[float(value) for value in normals.min(axis=0)],
            max=[float(value) for value in normals.max(axis=0)],
        ),
    ]

    count = len(regions)
    first_x = -SPACING * (count - 1) / 2
    materials: list[pygltflib.Material] = []
    meshes: list[pygltflib.Mesh] = []
    nodes: list[pygltflib.Node] = []
    for index, region in enumerate(regions):
        materials.append(
            pygltflib.Material(
                name=region.slug,
                pbrMetallicRoughness=pygltflib.PbrMetallicRoughness(
                    baseColorFactor=region_colour(index=index, count=count),
                    metallicFactor=METALLIC,
                    roughnessFactor=ROUGHNESS,
                ),
            )
        )
        primitive = pygltflib.Primitive(
            attributes=pygltflib.Attributes(POSITION=1, NORMAL=2), indices=0, material=index, mode=pygltflib.TRIANGLES
        )
        meshes.append(pygltflib.Mesh(name=region.slug, primitives=[primitive]))
        # Adding 0.0 turns a rounded -0.0 into 0.0, so the same layout always serialises the same way.
        x = round(first_x + SPACING * index, DECIMALS) + 0.0
        nodes.append(
            pygltflib.Node(name=region.slug, mesh=index, translation=[x, 0.0, 0.0], extras={"title": region.title})
        )

    gltf = pygltflib.GLTF2(
        asset=pygltflib.Asset(version="2.0", generator=GENERATOR),
        scene=0,
        scenes=[pygltflib.Scene(name=name, nodes=list(range(count)))],
        nodes=nodes,
        meshes=meshes,
        materials=materials,
        accessors=accessors,
        bufferViews=views,
        buffers=[pygltflib.Buffer(byteLength=len(blob))],
    )
    gltf.set_binary_blob(bytes(blob))
    return b"".join(gltf.save_to_bytes())
