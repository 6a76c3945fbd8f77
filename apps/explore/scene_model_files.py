"""Which model file each explorer scene in the course files needs, where it goes, and what it holds.

The course files are the one source of truth: scenes, their regions in order and their model paths
come from the YAML, and the files are written under the explore app's static folder, which the
static file server publishes at EXPLORER_ASSET_BASE_URL.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from django.apps import apps
from django.conf import settings

from apps.content.content_files.load import content_sources_read
from apps.content.content_files.source import ContentError, ContentFilesInvalid, parse_source
from apps.content.content_files.validate import course_doc_from_file
from apps.explore.scene_model import ModelRegion, scene_model_build

# Named in every message that asks for the files to be written again.
REBUILD_COMMAND = "python manage.py build_explorer_models"
MODEL_SUFFIX = ".glb"


@dataclass(frozen=True)
class SceneModelFile:
    scene: str
    source: str
    path: Path
    regions: tuple[str, ...]
    content: bytes


def scene_models_dir() -> Path:
    """The folder that the static file server publishes at the default EXPLORER_ASSET_BASE_URL."""
    return Path(apps.get_app_config("explore").path) / "static" / settings.EXPLORER_STATIC_DIR


def scene_model_files_plan(*, paths: Iterable[Path]) -> list[SceneModelFile]:
    """The model file of every live scene in the course files, in file and scene order.

    Scenes whose model is a full URL are hosted elsewhere and skipped. Only the file's shape is
    checked: the course rules are load_decks' to enforce, and a model depends on nothing but its
    scene. Raises ContentFilesInvalid, each error pointing at a file and line, when a file cannot be
    read as a course or a model path cannot be written safely.
    """
    root = scene_models_dir()
    errors: list[ContentError] = []
    planned: list[SceneModelFile] = []
    owners: dict[Path, str] = {}
    for source in content_sources_read(paths):
        parsed, parse_errors = parse_source(source)
        if parsed is None or parse_errors:
            errors += parse_errors
            continue
        course, shape_errors = course_doc_from_file(parsed)
        if course is None or shape_errors:
            errors += shape_errors
            continue
        for index, scene in enumerate(course.scenes):
            if scene.archived or "://" in scene.model_asset or scene.model_asset.startswith("//"):
                continue
            at = ("scenes", index, "model_asset")
            relative = PurePosixPath(scene.model_asset.lstrip("/"))
            if relative.suffix != MODEL_SUFFIX or ".." in relative.parts or "\\" in scene.model_asset:
                errors.append(parsed.error(at, f"must be a path ending in {MODEL_SUFFIX} without '..', or a full URL"))
                continue
            target = root.joinpath(*relative.parts)
            if target in owners:
                errors.append(parsed.error(at, f"the model file is already written for scene {owners[target]!r}"))
                continue
            owners[target] = scene.slug
            regions = [ModelRegion(slug=r.slug, title=r.title) for r in scene.regions if not r.archived]
            if not regions:
                errors.append(parsed.error(("scenes", index, "regions"), "every region is archived: nothing to draw"))
                continue
            try:
                content = scene_model_build(name=scene.slug, regions=regions)
            except ValueError as exc:
                errors.append(parsed.error(("scenes", index, "regions"), str(exc).rstrip(".")))
                continue
            planned.append(
                SceneModelFile(
                    scene=scene.slug,
                    source=source.name,
                    path=target,
                    regions=tuple(region.slug for region in regions),
                    content=content,
                )
            )
    if errors:
        raise ContentFilesInvalid(errors)
    return planned


def scene_model_files_stale(*, files: Iterable[SceneModelFile]) -> list[SceneModelFile]:
    """The planned files whose copy on disk is missing or differs byte for byte."""
    return [file for file in files if not file.path.is_file() or file.path.read_bytes() != file.content]
