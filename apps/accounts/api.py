"""Account endpoints."""

from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.serializers import TokenObtainInput, TokenObtainOutput
from apps.accounts.services import token_obtain


class TokenObtainView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[type] = []

    @extend_schema(
        summary="Exchange a username and password for an API token",
        request=TokenObtainInput,
        responses={200: TokenObtainOutput},
        auth=[],
    )
    def post(self, request: Request) -> Response:
        data = TokenObtainInput(data=request.data)
        data.is_valid(raise_exception=True)
        token = token_obtain(**data.validated_data)
        return Response(TokenObtainOutput({"token": token.key}).data)
