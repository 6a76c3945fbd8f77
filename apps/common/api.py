"""Health endpoint for load balancers and operators."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.common.health import broker_health, database_health, worker_health
from apps.common.schema import error_statuses

_component = inline_serializer("ComponentHealth", {"ok": serializers.BooleanField(), "detail": serializers.CharField()})


class HealthView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[type] = []

    @extend_schema(
        summary="Health of the database, broker and workers",
        description="200 when the database and broker answer, 503 otherwise. Workers are reported only.",
        responses={
            (code, "application/json"): inline_serializer(
                f"Health{code}",
                {
                    "status": serializers.ChoiceField(choices=["ok", "unavailable"]),
                    "database": _component,
                    "broker": _component,
                    "worker": _component,
                },
            )
            for code in (200, 503)
        },
    )
    @error_statuses(503)
    def get(self, request: Request) -> Response:
        database = database_health()
        broker = broker_health()
        worker = worker_health()
        healthy = database.ok and broker.ok
        return Response(
            {
                "status": "ok" if healthy else "unavailable",
                "database": {"ok": database.ok, "detail": database.detail},
                "broker": {"ok": broker.ok, "detail": broker.detail},
                "worker": {"ok": worker.ok, "detail": worker.detail},
            },
            status=200 if healthy else 503,
        )
