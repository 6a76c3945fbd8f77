"""What the adaptation endpoints answer: a fit of the learner's FSRS weights, and the course memory models."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.common.clock import time_text
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


class CourseMemoryModelOutput(serializers.Serializer):
    """A course's memory model in use, learned from every learner's reviews, and whether it schedules yours."""

    course = serializers.CharField(help_text="The course's slug.")
    course_title = serializers.CharField(help_text="The course's title.")
    in_use = serializers.BooleanField(
        help_text="True when it schedules your cards of the course (its weights and each card's factor); "
        "false when your own weights do."
    )
    why = serializers.CharField(help_text="Why it does or does not.")
    trained_at = serializers.DateTimeField(help_text="When its training finished.")
    learners = serializers.IntegerField(help_text="Learners whose reviews it was trained on.")
    log_loss = serializers.FloatField(help_text="Its log loss on every learner's held-out later reviews.")
    previous_log_loss = serializers.FloatField(
        help_text="The log loss, on the same reviews, of what each learner was scheduled with before."
    )
    your_held_out_reviews = serializers.IntegerField(
        help_text="Your later reviews both were scored on; 0 when you began after the training."
    )
    your_log_loss = serializers.FloatField(allow_null=True, help_text="Its log loss on your held-out reviews.")
    your_previous_log_loss = serializers.FloatField(allow_null=True, help_text="Your own weights' log loss on them.")

    def to_representation(self, found: Any) -> dict[str, Any]:
        row, decision = found.course_model, found.decision
        return {
            "course": row.course.slug,
            "course_title": row.course.title,
            "in_use": found.in_use,
            "why": found.why,
            "trained_at": time_text(row.finished_at),
            "learners": row.learners,
            "log_loss": row.log_loss,
            "previous_log_loss": row.previous_log_loss,
            "your_held_out_reviews": decision.evaluated_on_reviews if decision else 0,
            "your_log_loss": decision.log_loss if decision else None,
            "your_previous_log_loss": decision.previous_log_loss if decision else None,
        }
