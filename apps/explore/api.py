"""The concept constellation, recording explorer region visits, and the learner's activity feed."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.common.clock import time_text
from apps.common.query import query_params_validate
from apps.common.schema import error_statuses
from apps.content.serializers import SceneOutput
from apps.explore import selectors
from apps.explore.activity import ACTIVITY_KINDS, activity_page
from apps.explore.serializers import (
    ActivityItemOutput,
    ActivityPageOutput,
    ActivityQuery,
    ConstellationOutput,
    RegionVisitInput,
    RegionVisitOutput,
)
from apps.explore.services import constellation_layout_ensure, region_visit_record


class ConstellationView(APIView):
    @extend_schema(
        summary="A course's concepts as a 3D constellation, with links, cards and the learner's mastery",
        responses=ConstellationOutput,
        description=(
            "Coordinates are fixed for given concepts and links: computed once per change of them and "
            "stored. mastery is the mean probability of recall now over a concept's cards, new cards "
            "counting 0."
        ),
    )
    def get(self, request: Request, slug: str) -> Response:
        now = timezone.now()
        graph = selectors.course_graph_get(course_slug=slug)
        # The stored layout, computed and stored again only when the graph changed since.
        layout = constellation_layout_ensure(course=graph.course, slugs=graph.slugs, links=graph.link_keys, now=now)
        constellation = selectors.constellation_get(graph=graph, layout=layout, learner=request.user, now=now)
        return Response(ConstellationOutput(constellation).data)


class RegionVisitCreateView(APIView):
    @extend_schema(
        summary="Record that the learner opened an explorer region",
        request=RegionVisitInput,
        responses={201: RegionVisitOutput, 200: RegionVisitOutput},
        description=(
            "The visit's time is the server's. 201 when recorded; 200 with the first visit (duplicate: "
            "true) when the client_visit_id was already recorded for this region; 409 "
            "idempotency_key_reused, recording nothing, when that id was used for another region."
        ),
    )
    @error_statuses(409)
    def post(self, request: Request, slug: str, region_slug: str) -> Response:
        body = RegionVisitInput(data=request.data)
        body.is_valid(raise_exception=True)
        visit, created = region_visit_record(
            learner=request.user,
            scene_slug=slug,
            region_slug=region_slug,
            client_visit_id=body.validated_data.get("client_visit_id"),
            now=timezone.now(),
        )
        return Response(
            RegionVisitOutput(visit, context={"duplicate": not created}).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


# One activity kind, as the kind parameter's pattern spells it.
_KIND = "|".join(ACTIVITY_KINDS)


class ActivityView(APIView):
    @extend_schema(
        summary="The learner's own activity, newest first",
        parameters=[
            ActivityQuery,
            OpenApiParameter(
                "kind",
                {"type": "string", "pattern": f"^({_KIND})(,({_KIND}))*$"},
                description=f"Only these kinds, comma-separated: {', '.join(ACTIVITY_KINDS)}.",
            ),
        ],
        responses=ActivityPageOutput,
        description=(
            "Follow next (or pass next_before as before) for older items; every item appears on exactly "
            "one page. A page may hold more than page_size items when that many share one time."
        ),
    )
    def get(self, request: Request) -> Response:
        params = query_params_validate(query_params=request.query_params, serializer_class=ActivityQuery)
        page = activity_page(
            learner=request.user, kinds=params.get("kind"), before=params.get("before"), limit=params["page_size"]
        )
        next_url = None
        if page.next_before is not None:
            following = {key: value for key, value in request.query_params.items() if key != "before"}
            following["before"] = time_text(page.next_before)
            next_url = request.build_absolute_uri(request.path) + "?" + urlencode(following)
        return Response(
            {
                "results": ActivityItemOutput(page.items, many=True).data,
                "next": next_url,
                "next_before": time_text(page.next_before) if page.next_before is not None else None,
            }
        )


class SceneDetailView(generics.RetrieveAPIView):
    """An explorer scene: the 3D model to load, its clickable regions, and when the learner last visited each."""

    serializer_class = SceneOutput

    def get_object(self) -> Any:
        return selectors.scene_get(slug=self.kwargs["slug"], learner=self.request.user)
