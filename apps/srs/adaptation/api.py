"""Asking for a fit of the learner's FSRS weights to their reviews now."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.common.schema import error_statuses
from apps.common.throttling import ScopedLearnerRateThrottle
from apps.srs.adaptation.optimization import parameter_fit_request
from apps.srs.adaptation.serializers import ParameterFitOutput
from apps.srs.core.optimizer import MIN_REVIEWS_TO_FIT, RMSE_BINS_TOLERANCE


class ParameterFitCreateView(APIView):
    throttle_classes = [ScopedLearnerRateThrottle]
    throttle_scope = "optimize"

    @extend_schema(
        summary="Fit FSRS weights to your reviews now",
        request=None,
        responses={202: ParameterFitOutput},
        description=(
            "A worker fits FSRS-6 weights to your reviews, scores them and the weights in use on your latest "
            "reviews (held out of the fit), and adopts them when their log loss is lower and their RMSE(bins) "
            f"no more than {RMSE_BINS_TOLERANCE} higher, unless parameters_pinned. The fit and its figures show in "
            "GET /srs/settings/ "
            f"(parameter_fits). 409 fit_in_progress when a fit is queued or running; 409 not_enough_reviews "
            f"under {MIN_REVIEWS_TO_FIT} reviews; 429 past the rate THROTTLE_RATE_OPTIMIZE_LEARNER."
        ),
    )
    @error_statuses(409)
    def post(self, request: Request) -> Response:
        fit = parameter_fit_request(learner=request.user, now=timezone.now())
        return Response(ParameterFitOutput(fit).data, status=status.HTTP_202_ACCEPTED)
