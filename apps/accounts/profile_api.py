"""The signed-in learner's own account: who they are, and how they appear to others."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.profile_serializers import MeInput, MeOutput
from apps.accounts.profiles import learner_profile_get, learner_profile_update


class MeView(APIView):
    @extend_schema(summary="The signed-in learner's account and profile", responses=MeOutput)
    def get(self, request: Request) -> Response:
        return Response(MeOutput(learner_profile_get(learner=request.user)).data)

    @extend_schema(
        summary="Change the display name or the leaderboard opt-in",
        request=MeInput,
        responses=MeOutput,
        description=(
            "Send only what changes. username, email and is_staff are read-only (400). Opting in to "
            "leaderboards needs a non-blank display name (400 otherwise); nothing changes on a 400."
        ),
    )
    def patch(self, request: Request) -> Response:
        body = MeInput(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        return Response(MeOutput(learner_profile_update(learner=request.user, changes=body.validated_data)).data)
