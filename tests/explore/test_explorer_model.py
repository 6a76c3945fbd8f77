"""The explorer scene's 3D model: built from the course files, valid glTF 2.0, served with its media type."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pygltflib
import pytest
import requests
from django.contrib.staticfiles import finders
from django.core.management import CommandError, call_command
from django.test import Client

from apps.accounts.devices import device_token_issue
from apps.explore.scene_model import ModelRegion, scene_model_build
from apps.explore.scene_model_files import REBUILD_COMMAND, scene_model_files_plan, scene_models_dir
from tests.support.explore import SCENE
from tests.support.paths import DECKS_DIR, REPO_ROOT

GLB_MEDIA_TYPE = "model/gltf-binary"
MODEL_STATIC_PATH = "explorer/models/input-pipeline.glb"
COMPONENT_DTYPES = {pygltflib.UNSIGNED_SHORT: np.uint16, pygltflib.UNSIGNED_INT: np.uint32, pygltflib.FLOAT: np.float32}
TYPE_WIDTHS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}


def glb_chunks(data: bytes) -> tuple[dict[str, Any], bytes]:
    """The JSON and BIN chunks of a GLB file, checking the container as the glTF 2.0 specification lays it out."""
    magic, version, length = struct.unpack_from("<4sII", data, 0)
    assert magic == b"glTF"
    assert version == 2
    assert length == len(data)
    json_length, json_type = struct.unpack_from("<I4s", data, 12)
    assert json_type == b"JSON"
    assert json_length % 4 == 0, "the JSON chunk must be padded to 4 bytes"
    document = json.loads(data[20 : 20 + json_length].decode("utf-8"))
    bin_start = 20 + json_length
    bin_length, bin_type = struct.unpack_from("<I4s", data, bin_start)
    assert bin_type == b"BIN\x00"
    assert bin_length % 4 == 0, "the BIN chunk must be padded to 4 bytes"
    assert bin_start + 8 + bin_length == len(data)
    return document, data[bin_start + 8 : bin_start + 8 + bin_length]


def node_names(data: bytes) -> list[str]:
    """Names of the default scene's nodes, read through pygltflib."""
    gltf = pygltflib.GLTF2.load_from_bytes(data)
    assert gltf.scene is not None
    return [gltf.nodes[index].name for index in gltf.scenes[gltf.scene].nodes]


def committed_model() -> bytes:
    return (scene_models_dir() / "models" / "input-pipeline.glb").read_bytes()


def scene_regions_in_course_files() -> list[str]:
    (planned,) = [file for file in scene_model_files_plan(paths=[DECKS_DIR]) if file.scene == SCENE]
    return list(planned.regions)


def test_committed_model_has_one_node_per_region_of_the_scene():
    regions = scene_regions_in_course_files()
    names = node_names(committed_model())
    missing = [slug for slug in regions if slug not in names]
    extra = [name for name in names if name not in regions]
    assert names == regions, (
        f"{scene_models_dir().relative_to(REPO_ROOT)}/models/input-pipeline.glb is out of date with the "
        f"scene {SCENE!r} in decks/ (regions without a node: {missing}; nodes without a region: {extra}; "
        f"or the order differs). Run `{REBUILD_COMMAND}` and commit the result."
    )


def test_committed_model_is_exactly_what_the_command_builds():
    out = io.StringIO()
    call_command("build_explorer_models", "--check", stdout=out)
    assert "up to date" in out.getvalue()


def test_check_fails_naming_the_command_when_a_model_is_missing(settings):
    settings.EXPLORER_STATIC_DIR = "not-built-yet"
    with pytest.raises(CommandError) as raised:
        call_command("build_explorer_models", "--check", stdout=io.StringIO())
    assert REBUILD_COMMAND in str(raised.value)
    assert "input-pipeline-explorer" in str(raised.value)
    assert not (scene_models_dir()).exists()


def test_command_writes_the_same_bytes_every_time(settings, tmp_path: Path):
    # An absolute folder replaces the app's static folder, so the committed file is left alone.
    settings.EXPLORER_STATIC_DIR = str(tmp_path)
    first = io.StringIO()
    call_command("build_explorer_models", stdout=first)
    written = tmp_path / "models" / "input-pipeline.glb"
    assert "1 written" in first.getvalue()
    again = io.StringIO()
    call_command("build_explorer_models", stdout=again)
    assert "0 written, 1 unchanged" in again.getvalue()
    assert written.read_bytes() == committed_model()


def test_a_model_path_outside_the_static_folder_is_refused_with_file_and_line(settings, tmp_path: Path):
    settings.EXPLORER_STATIC_DIR = str(tmp_path / "static")
    text = (DECKS_DIR / "tensorflow-ai-phd.yaml").read_text(encoding="utf-8")
    assert "model_asset: models/input-pipeline.glb" in text
    course = tmp_path / "course.yaml"
    course.write_text(text.replace("model_asset: models/input-pipeline.glb", "model_asset: ../../escape.glb"))
    line = next(n for n, row in enumerate(text.splitlines(), start=1) if "model_asset:" in row)
    errors = io.StringIO()
    with pytest.raises(CommandError, match="no model was written"):
        call_command("build_explorer_models", str(course), stdout=io.StringIO(), stderr=errors)
    assert f"{course}:{line}: scenes[0].model_asset: must be a path ending in .glb" in errors.getvalue()
    assert not list(tmp_path.rglob("*.glb"))


def test_a_scene_whose_regions_repeat_a_slug_is_refused_with_file_and_line(settings, tmp_path: Path):
    settings.EXPLORER_STATIC_DIR = str(tmp_path / "static")
    text = (DECKS_DIR / "tensorflow-ai-phd.yaml").read_text(encoding="utf-8")
    region = "      - slug: batch\n        title: Batch\n"
    assert text.count(region) == 1
    course = tmp_path / "course.yaml"
    course.write_text(text.replace(region, "      - slug: cache\n        title: Batch\n"))
    errors = io.StringIO()
    with pytest.raises(CommandError, match="no model was written"):
        call_command("build_explorer_models", str(course), stdout=io.StringIO(), stderr=errors)
    assert f"{course}:" in errors.getvalue()
    assert "scenes[0].regions: Region slugs repeat: cache" in errors.getvalue()
    assert not list(tmp_path.rglob("*.glb"))


def test_regions_in_another_order_give_another_model_and_repeats_are_refused():
    regions = [ModelRegion(slug="cache", title="Cache"), ModelRegion(slug="shuffle-buffer", title="Shuffle")]
    built = scene_model_build(name="scene", regions=regions)
    assert scene_model_build(name="scene", regions=regions) == built
    swapped = scene_model_build(name="scene", regions=regions[::-1])
    assert node_names(swapped) == ["shuffle-buffer", "cache"]
    assert swapped != built
    with pytest.raises(ValueError, match="repeat: cache"):
        scene_model_build(name="scene", regions=[*regions, regions[0]])


def test_committed_model_is_valid_gltf_2():
    document, binary = glb_chunks(committed_model())
    assert document["asset"]["version"] == "2.0"
    assert document["buffers"] == [{"byteLength": len(binary)}]
    for view in document["bufferViews"]:
        assert view["byteOffset"] % 4 == 0
        assert view["byteOffset"] + view["byteLength"] <= len(binary)
    for accessor in document["accessors"]:
        view = document["bufferViews"][accessor["bufferView"]]
        dtype = COMPONENT_DTYPES[accessor["componentType"]]
        width = TYPE_WIDTHS[accessor["type"]]
        start = view["byteOffset"] + accessor.get("byteOffset", 0)
        flat = np.frombuffer(binary, dtype=dtype, count=accessor["count"] * width, offset=start)
        values = flat.reshape(accessor["count"], width)
        # The specification requires min and max on positions; they must be the data's own bounds.
        assert accessor["min"] == values.min(axis=0).tolist()
        assert accessor["max"] == values.max(axis=0).tolist()
    names = [node["name"] for node in document["nodes"]]
    assert len(set(names)) == len(names)
    (scene,) = document["scenes"]
    assert sorted(scene["nodes"]) == list(range(len(document["nodes"])))
    for node in document["nodes"]:
        mesh = document["meshes"][node["mesh"]]
        (primitive,) = mesh["primitives"]
        assert document["accessors"][primitive["attributes"]["POSITION"]]["min"]
        assert document["materials"][primitive["material"]]["pbrMetallicRoughness"]["baseColorFactor"][3] == 1.0


def test_whitenoise_serves_the_model_with_the_gltf_media_type(settings):
    # How `make run` serves static files (runserver leaves them to WhiteNoise, which reads the apps'
    # static folders in debug); in production WhiteNoise reads the same files from STATIC_ROOT,
    # where collectstatic copies what the finders find.
    settings.WHITENOISE_USE_FINDERS = True
    found = finders.find(MODEL_STATIC_PATH)
    assert found is not None
    assert Path(found) == scene_models_dir() / "models" / "input-pipeline.glb"
    response = Client().get(f"/static/{MODEL_STATIC_PATH}")
    assert response.status_code == 200
    assert response["Content-Type"] == GLB_MEDIA_TYPE
    assert response.getvalue() == committed_model()


def test_model_url_of_the_scene_is_served_and_parses_to_one_node_per_region(live_server, shipped_course, learner):
    token = device_token_issue(user=learner, device_name=None).key
    scene = requests.get(
        f"{live_server.url}/api/v1/explorer/{SCENE}/", headers={"Authorization": f"Token {token}"}, timeout=30
    )
    assert scene.status_code == 200, scene.text
    body = scene.json()
    assert body["model_url"] == f"{live_server.url}/static/{MODEL_STATIC_PATH}"

    model = requests.get(body["model_url"], timeout=30)
    assert model.status_code == 200
    assert model.headers["Content-Type"] == GLB_MEDIA_TYPE
    document, _ = glb_chunks(model.content)
    region_slugs = [region["slug"] for region in body["regions"]]
    assert [node["name"] for node in document["nodes"]] == region_slugs
    assert node_names(model.content) == region_slugs
