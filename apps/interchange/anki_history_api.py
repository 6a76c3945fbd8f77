"""Endpoints of Anki history imports: upload a package, then follow the replay of its reviews."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.common.clock import time_text
from apps.common.jobs import JobStatus
from apps.common.schema import ErrorSerializer
from apps.interchange.anki_history import SkipReason, anki_history_import_create, anki_history_import_get
from apps.srs.models import AnkiHistoryImport

_SKIP_REASONS = sorted(value for name, value in vars(SkipReason).items() if name.isupper())


class AnkiHistoryOutput(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField(help_text="Where to follow this import.")
    status = serializers.ChoiceField(choices=JobStatus.choices)
    progress_done = serializers.IntegerField(help_text="Reviews of the history handled so far.")
    progress_total = serializers.IntegerField(help_text="Reviews of the history to record; 0 until it is read.")
    total_entries = serializers.IntegerField(help_text="Review log entries in the package.")
    matched = serializers.IntegerField(help_text="Entries of cards here that came from the package's notes.")
    applied = serializers.IntegerField(help_text="Reviews this import recorded.")
    skipped = serializers.DictField(
        child=serializers.IntegerField(),
        help_text=f"Entries not recorded, by reason: {', '.join(_SKIP_REASONS)}.",
    )
    error = serializers.CharField(allow_null=True, help_text="Why the import failed; null unless it did.")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def to_representation(self, row: AnkiHistoryImport) -> dict[str, Any]:
        return {
            "id": row.pk,
            "url": anki_history_url(row.pk),
            "status": row.status,
            "progress_done": row.progress_done,
            "progress_total": row.progress_total,
            "total_entries": row.total_entries,
            "matched": row.matched,
            "applied": row.applied,
            "skipped": row.skipped,
            "error": row.error_message or None,
            "created_at": time_text(row.created_at),
            "finished_at": time_text(row.finished_at) if row.finished_at else None,
        }


def anki_history_url(import_id: int) -> str:
    return f"/api/v1/anki-history/{import_id}/"


class AnkiHistoryCreateView(APIView):
    parser_classes = [MultiPartParser]

    class InputSerializer(serializers.Serializer):
        package = serializers.FileField(
            allow_empty_file=False,
            help_text="The .apkg or .colpkg exported from Anki with scheduling information (media not needed).",
        )

    @extend_schema(
        summary="Upload an Anki package to replay its review history into your memory of the cards from it",
        request={"multipart/form-data": InputSerializer},
        responses={
            202: AnkiHistoryOutput,
            415: OpenApiResponse(ErrorSerializer, description="The body is not multipart/form-data."),
        },
        description=(
            "Reviews of notes whose GUID a card here came from are recorded as your reviews, in time order, by a "
            "background job; follow it at `url`. Learning, review and relearning answers count, and a filtered "
            "deck's answers when it rescheduled; manual and rescheduling entries, cram answers, and entries of "
            "cards not here are counted under `skipped`. Uploading the same history again records nothing twice. "
            "400 invalid_package when the file is not an Anki package that can be read (nothing is stored); 413 "
            "past ANKI_HISTORY_MAX_BYTES."
        ),
    )
    def post(self, request: Request) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        upload = body.validated_data["package"]
        row = anki_history_import_create(learner=request.user, package=upload, size=upload.size)
        return Response(
            AnkiHistoryOutput(row).data, status=status.HTTP_202_ACCEPTED, headers={"Location": anki_history_url(row.pk)}
        )


class AnkiHistoryDetailView(APIView):
    @extend_schema(
        summary="An Anki history import of yours: its status, progress and counts", responses=AnkiHistoryOutput
    )
    def get(self, request: Request, import_id: int) -> Response:
        return Response(AnkiHistoryOutput(anki_history_import_get(learner=request.user, import_id=import_id)).data)
