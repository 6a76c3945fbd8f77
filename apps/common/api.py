"""Health endpoint for load balancers and operators."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.common.health import service_health
from apps.common.schema import error_statuses

_component = inline_serializer("ComponentHealth", {"ok": serializers.BooleanField(), "detail": serializers.CharField()})


class HealthView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[type] = []

    @extend_schema(
        summary="Health of the database, cache, broker and workers",
        description=(
            "Each component with `ok` and a `detail`; the database is given up after 2 s, the others after "
            "about a second. 503 (`unavailable`) only when the database is down, as nothing can be served "
            "then; 200 otherwise, with `degraded` "
            "when the cache, the broker or the workers are down (the API still serves everything, but "
            "requests are not throttled or submissions wait to be graded)."
        ),
        responses={
            (code, "application/json"): inline_serializer(
                f"Health{code}",
                {
                    "status": serializers.ChoiceField(choices=["ok", "degraded", "unavailable"]),
                    "database": _component,
                    "cache": _component,
                    "broker": _component,
                    "worker": _component,
                },
            )
            for code in (200, 503)
        },
    )
    @error_statuses(503)
    def get(self, request: Request) -> Response:
        health = service_health()
        components = {
            "database": health.database,
            "cache": health.cache,
            "broker": health.broker,
            "worker": health.worker,
        }
        return Response(
            {
                "status": health.status,
                **{name: {"ok": part.ok, "detail": part.detail} for name, part in components.items()},
            },
            status=503 if health.status == "unavailable" else 200,
        )
