"""Writes of the explore app: the stored constellation layout and learners' region visits."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.shortcuts import get_object_or_404

from apps.common.errors import IdempotencyKeyReused
from apps.content.models import Course, ExplorerRegion
from apps.explore.layout import LinkKey, layout_compute, layout_digest
from apps.explore.models import ConstellationLayout, RegionVisit


def constellation_layout_ensure(
    *, course: Course, slugs: Sequence[str], links: Sequence[LinkKey], now: datetime
) -> ConstellationLayout:
    """The course's stored layout, recomputed only when its concepts or links are not those it was made from.

    Most requests end at the first read. A recomputation locks the course row, so concurrent first
    requests compute once: the others wait, then find the fresh row.
    """
    digest = layout_digest(slugs=slugs, links=links)
    stored = ConstellationLayout.objects.filter(course=course).first()
    if stored is not None and stored.digest == digest:
        return stored
    with transaction.atomic():
        Course.objects.select_for_update().only("pk").get(pk=course.pk)
        stored = ConstellationLayout.objects.filter(course=course).first()
        if stored is not None and stored.digest == digest:
            return stored
        positions = {slug: list(xyz) for slug, xyz in layout_compute(slugs=slugs, links=links).items()}
        stored, _ = ConstellationLayout.objects.update_or_create(
            course=course, defaults={"digest": digest, "positions": positions, "computed_at": now}
        )
    return stored


def _visible_region(*, scene_slug: str, region_slug: str) -> ExplorerRegion:
    return get_object_or_404(
        ExplorerRegion.objects.filter(
            archived=False, scene__archived=False, scene__course__archived=False
        ).select_related("scene"),
        scene__slug=scene_slug,
        slug=region_slug,
    )


def region_visit_record(
    *, learner: Any, scene_slug: str, region_slug: str, client_visit_id: uuid.UUID | None, now: datetime
) -> tuple[RegionVisit, bool]:
    """Record that the learner opened a region, at the server's time; returns the visit and whether it is new.

    A client_visit_id already recorded returns that first visit unchanged, found before the region is
    looked up so a retry still succeeds after the region was archived. The visit's payload is its
    scene and region (its time is the server's, never the client's): sent with any other, the id is
    refused with IdempotencyKeyReused and nothing is recorded.
    """
    if client_visit_id is not None:
        seen = _visit_by_client_id(learner=learner, client_visit_id=client_visit_id)
        if seen is not None:
            return _same_visit_or_refused(seen, scene_slug=scene_slug, region_slug=region_slug), False
    region = _visible_region(scene_slug=scene_slug, region_slug=region_slug)
    try:
        with transaction.atomic():
            visit = RegionVisit.objects.create(
                learner=learner,
                region=region,
                visited_at=now,
                client_visit_id=client_visit_id if client_visit_id is not None else uuid.uuid4(),
            )
    except IntegrityError:
        # The same visit sent twice at once: the other request recorded it first.
        seen = _visit_by_client_id(learner=learner, client_visit_id=client_visit_id)
        if seen is None:
            raise
        return _same_visit_or_refused(seen, scene_slug=scene_slug, region_slug=region_slug), False
    return visit, True


def _visit_by_client_id(*, learner: Any, client_visit_id: uuid.UUID | None) -> RegionVisit | None:
    if client_visit_id is None:
        return None
    return (
        RegionVisit.objects.select_related("region__scene")
        .filter(learner=learner, client_visit_id=client_visit_id)
        .first()
    )


def _same_visit_or_refused(visit: RegionVisit, *, scene_slug: str, region_slug: str) -> RegionVisit:
    differs = [
        name
        for name, first, now_sent in (
            ("scene", visit.region.scene.slug, scene_slug),
            ("region", visit.region.slug, region_slug),
        )
        if first != now_sent
    ]
    if differs:
        raise IdempotencyKeyReused(
            f"client_visit_id {visit.client_visit_id} was already used for region "
            f"{visit.region.scene.slug}/{visit.region.slug}, another {' and '.join(differs)}; nothing was "
            "recorded. Send a new id for another visit.",
            fields={name: ["Differs from the visit first sent with this client_visit_id."] for name in differs},
        )
    return visit
