"""What the adaptation endpoints answer: a fit of the learner's FSRS weights."""

from __future__ import annotations

from rest_framework import serializers

from apps.common.jobs import JobStatus
from apps.srs.models import ParameterFitTrigger


class ParameterFitOutput(serializers.Serializer):
    """One fit of FSRS weights to the learner's reviews, with how both weight sets scored on later reviews."""

    id = serializers.IntegerField()
    status = serializers.ChoiceField(
        choices=JobStatus.values, help_text="queued, running, done or failed (reason says why)."
    )
    trigger = serializers.ChoiceField(
        choices=ParameterFitTrigger.values, help_text="schedule (the nightly run) or request (POST /srs/optimize/)."
    )
    parameters = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, help_text="The fitted weights; null until the fit is done."
    )
    fitted_on_reviews = serializers.IntegerField(help_text="Reviews on a later day than the one before, fitted on.")
    evaluated_on_reviews = serializers.IntegerField(
        help_text="Later reviews, not fitted on, that both weight sets were scored on."
    )
    log_loss = serializers.FloatField(allow_null=True, help_text="Log loss of the fitted weights; lower is better.")
    rmse_bins = serializers.FloatField(
        allow_null=True, help_text="RMSE(bins) of the fitted weights, as srs-benchmark bins it; lower is better."
    )
    previous_parameters = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, help_text="The weights in use when the fit ran."
    )
    previous_log_loss = serializers.FloatField(allow_null=True, help_text="Log loss of the weights in use.")
    previous_rmse_bins = serializers.FloatField(allow_null=True, help_text="RMSE(bins) of the weights in use.")
    adopted = serializers.BooleanField(help_text="True when the fitted weights replaced the ones in use.")
    reason = serializers.CharField(help_text="Why they were adopted or not, or why the fit failed.")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
