"""The signed-in learner's own account: who they are, their settings, their data, and deleting it all."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.export import EXPORTERS, account_export
from apps.accounts.me import account_get, account_update
from apps.accounts.profile_serializers import MeInput, MeOutput
from apps.accounts.serializers import AccountDeleteInput
from apps.accounts.services import account_delete
from apps.common.validation import body_checked


class MeView(APIView):
    @extend_schema(summary="The signed-in learner's account, profile and settings", responses=MeOutput)
    def get(self, request: Request) -> Response:
        return Response(MeOutput(account_get(learner=request.user)).data)

    @extend_schema(
        summary="Change the profile, scheduling settings or email settings",
        request=MeInput,
        responses=MeOutput,
        description=(
            "Send only what changes; scheduling and email_settings may be partial too. id, username, email, "
            "date_joined and is_staff are read-only, and unknown fields are refused (400). Opting in to "
            "leaderboards needs a non-blank display name. All or nothing: nothing changes on a 400."
        ),
    )
    def patch(self, request: Request) -> Response:
        changes, refused = body_checked(MeInput(data=request.data, partial=True))
        return Response(MeOutput(account_update(learner=request.user, changes=changes, refused=refused)).data)


class MeDeleteView(APIView):
    @extend_schema(
        summary="Delete the account and everything stored about it",
        request=AccountDeleteInput,
        responses={204: OpenApiResponse(description="Deleted; the API token no longer works.")},
        description=(
            "A POST, so that the password confirming it travels in a JSON body that every client can send. "
            "A wrong or missing password is a 400 and deletes nothing. Staff may delete their own account too."
        ),
    )
    def post(self, request: Request) -> Response:
        body = AccountDeleteInput(data=request.data)
        body.is_valid(raise_exception=True)
        account_delete(user=request.user, password=body.validated_data["password"])
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeExportView(APIView):
    @extend_schema(
        summary="Download everything stored about the signed-in learner, as one JSON document",
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="One JSON document, one key per app.")},
        description=(
            "The password hash is never included. Keys: format_version, exported_at, "
            + ", ".join(EXPORTERS)
            + ". Sent as an attachment."
        ),
    )
    def get(self, request: Request) -> Response:
        now = timezone.now()
        document = account_export(learner=request.user, now=now)
        filename = f"quizsite-account-{request.user.pk}-{now:%Y%m%d}.json"
        return Response(document, headers={"Content-Disposition": f'attachment; filename="{filename}"'})
