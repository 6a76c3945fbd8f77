"""Submitting pipeline code and following its grading."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.common.fields import CleanSlugField
from apps.common.pagination import PageQuery
from apps.common.query import query_params_validate
from apps.common.schema import error_statuses
from apps.common.throttling import ScopedAddressRateThrottle
from apps.exercises.models import SubmissionStatus
from apps.exercises.selectors import submission_get, submissions_visible
from apps.exercises.serializers import SubmissionCreatedOutput, SubmissionInput, SubmissionOutput, submission_url
from apps.exercises.services import submission_create


class SubmissionCreateView(APIView):
    # Per learner, the service limits submissions a minute (TooManySubmissions); per address, this.
    throttle_classes = [ScopedAddressRateThrottle]
    throttle_scope = "submissions"

    @extend_schema(
        summary="Submit code for a pipeline exercise; it is graded in the background",
        request=SubmissionInput,
        responses={202: SubmissionCreatedOutput, 200: SubmissionCreatedOutput},
        description=(
            "202 when stored and queued for grading; 200 with the first submission (duplicate: true), "
            "graded once and not counted again against the per-minute limit, when the "
            "client_submission_id was already recorded with this exercise and code; 409 "
            "idempotency_key_reused, storing nothing, when it was recorded with another exercise or code."
        ),
    )
    @error_statuses(409)
    def post(self, request: Request, slug: str) -> Response:
        payload = SubmissionInput(data=request.data)
        payload.is_valid(raise_exception=True)
        submission, created = submission_create(
            learner=request.user,
            exercise_slug=slug,
            code=payload.validated_data["code"],
            client_submission_id=payload.validated_data.get("client_submission_id"),
        )
        url = submission_url(submission, request)
        body = SubmissionCreatedOutput(
            {
                "id": submission.pk,
                "url": url,
                "status": submission.status,
                "client_submission_id": submission.client_submission_id,
                "duplicate": not created,
            }
        ).data
        return Response(
            body, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK, headers={"Location": url}
        )


class SubmissionListView(ListAPIView):
    serializer_class = SubmissionOutput

    @extend_schema(
        summary="Submissions, newest first: your own, or everyone's for staff",
        parameters=[
            OpenApiParameter("exercise", OpenApiTypes.STR, description="Only submissions to this exercise (slug)."),
            OpenApiParameter("status", OpenApiTypes.STR, enum=SubmissionStatus.values),
        ],
    )
    def get(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().get(request, *args, **kwargs)

    class Query(PageQuery):
        exercise = CleanSlugField(required=False)
        status = serializers.ChoiceField(choices=SubmissionStatus.choices, required=False)

    def get_queryset(self):  # type: ignore[no-untyped-def]
        params = query_params_validate(query_params=self.request.query_params, serializer_class=self.Query)
        return submissions_visible(
            user=self.request.user, exercise_slug=params.get("exercise"), status=params.get("status")
        )


class SubmissionDetailView(APIView):
    @extend_schema(summary="A submission: its status and progress, then its result", responses=SubmissionOutput)
    def get(self, request: Request, submission_id: int) -> Response:
        submission = submission_get(user=request.user, submission_id=submission_id)
        return Response(SubmissionOutput(submission, context={"request": request}).data)
