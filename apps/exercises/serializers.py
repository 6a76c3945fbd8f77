"""Shapes of the submission endpoints."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from apps.common.fields import CanonicalUUIDField, CleanCharField
from apps.exercises.models import Submission, SubmissionStatus, Verdict
from apps.exercises.phases import submission_phase


class SubmissionInput(serializers.Serializer):
    code = CleanCharField(trim_whitespace=False, allow_blank=False)
    client_submission_id = CanonicalUUIDField(
        required=False,
        help_text=(
            "Made by the client to make retries safe: sent again with the same exercise and code, it "
            "answers the first submission (200) without grading it again; with other code it is refused (409)."
        ),
    )


class CheckOutput(serializers.Serializer):
    name = serializers.CharField()
    passed = serializers.BooleanField()
    message = serializers.CharField()
    ran = serializers.BooleanField(
        required=False,
        help_text="False when the check could not run because an earlier one failed (its message says which)."
        " Absent from results graded before it was recorded: those checks all ran.",
    )
    credit = serializers.FloatField(
        required=False,
        min_value=0.0,
        max_value=1.0,
        help_text="Only on a check that can be partly met (a learner's own test that tells some of the grader's"
        " pipelines apart): the share of the correctness points it earns. When such checks are all that"
        " failed, the score's correctness is its points times their credits.",
    )


class LintOutput(serializers.Serializer):
    rule = serializers.CharField()
    line = serializers.IntegerField()
    message = serializers.CharField()


class PipelineTimingOutput(serializers.Serializer):
    first_batch_seconds = serializers.FloatField(help_text="From calling the function to the first batch.")
    epoch_seconds = serializers.FloatField(help_text="Median epoch time after warm-up, training step included.")
    batches_per_second = serializers.FloatField(help_text="Median steady-state throughput.")
    input_wait_fraction = serializers.FloatField(help_text="Share of the time the training step waited for input.")
    total_seconds = serializers.FloatField()
    measured_epochs = serializers.IntegerField()
    epoch_spread = serializers.FloatField(help_text="(slowest - fastest) / median of the measured epochs.")


class TimingReferencesOutput(serializers.Serializer):
    timed = serializers.ChoiceField(
        choices=["this grading", "stored"],
        help_text="'stored': the naive reference's time is the host's stored one, scaled by this grading's"
        " expert calibration runs; 'this grading': all three pipelines were timed here.",
    )
    why = serializers.CharField(required=False, help_text="Why the references were timed here.")
    drift = serializers.FloatField(
        required=False, help_text="How far the expert calibration ran from the stored figures (relative, signed)."
    )
    measured_at = serializers.FloatField(required=False, help_text="When the stored figures were measured (Unix time).")
    expert_vs_naive = serializers.FloatField(required=False, help_text="The stored figures' naive-to-expert ratio.")


class TimingHostOutput(serializers.Serializer):
    exclusive = serializers.BooleanField(
        help_text="The timing phase held the host's timing lock: no other grading timed on this host meanwhile."
    )
    lock_wait_seconds = serializers.FloatField(help_text="How long the grading waited for the lock.")
    timing_cpus = serializers.ListField(
        child=serializers.IntegerField(), allow_null=True, help_text="The CPUs timed runs were pinned to; null: none."
    )
    cpus = serializers.IntegerField(help_text="How many CPUs the timed runs could use.")
    max_busy_fraction = serializers.FloatField(help_text="A round with more load than this from others is timed again.")
    rounds_timed = serializers.IntegerField()
    rounds_planned = serializers.IntegerField(
        required=False, help_text="The rounds the plan asks for; absent from results graded before it was recorded."
    )
    stopped_early = serializers.BooleanField(
        required=False,
        help_text="Timing stopped before rounds_planned because the calm rounds' speedups already agreed"
        " (GRADER_TIMING_AGREEMENT); absent from results graded before it was recorded.",
    )
    retimed = serializers.IntegerField(help_text="Rounds timed again because the host was busy.")
    disturbed = serializers.BooleanField(help_text="Even the rounds used were above max_busy_fraction.")
    busy_fraction = serializers.FloatField(help_text="The highest load from others in the rounds used.")
    loadavg = serializers.ListField(child=serializers.FloatField(), help_text="1, 5 and 15 minute load averages.")
    references = TimingReferencesOutput(
        required=False, help_text="Where the references' figures came from; absent from older results."
    )
    rounds = serializers.ListField(
        child=serializers.DictField(),
        help_text="Each round timed: order, epoch_seconds and load per pipeline, busy_fraction, disturbed, used.",
    )


class TimingOutput(serializers.Serializer):
    submission = PipelineTimingOutput()
    naive = PipelineTimingOutput()
    expert = PipelineTimingOutput()
    host = TimingHostOutput(required=False, help_text="The load seen while timing; absent from older results.")
    rewrites_off = serializers.BooleanField()
    note = serializers.CharField()


class SpeedupOutput(serializers.Serializer):
    vs_naive = serializers.FloatField(help_text="Median over the rounds used of each round's own ratio.")
    vs_expert = serializers.FloatField()
    expert_vs_naive = serializers.FloatField()
    spread = serializers.FloatField(
        required=False, help_text="(highest - lowest) / median of the rounds' vs_naive ratios."
    )
    rounds = serializers.IntegerField(required=False, help_text="Rounds the ratios were taken from.")
    tolerance = serializers.FloatField(
        required=False, help_text="Relative noise within which a speed counts as the expert reference's."
    )


class ScoreOutput(serializers.Serializer):
    total = serializers.FloatField()
    max = serializers.FloatField()
    correctness = serializers.FloatField()
    correctness_max = serializers.FloatField(
        required=False, help_text="The most correctness can give; absent from results graded before it was recorded."
    )
    speed = serializers.FloatField()
    speed_max = serializers.FloatField(
        required=False, help_text="The most speed can give; absent from results graded before it was recorded."
    )
    speed_timed = serializers.BooleanField()


class StageOutput(serializers.Serializer):
    path = serializers.CharField(help_text='The stage in tf.data\'s trace, from the output: "Prefetch::BatchV2::Map".')
    operation = serializers.CharField(help_text="tf.data's name of the stage's iterator.")
    kind = serializers.CharField(help_text="The transformation: read, map, shuffle, batch, prefetch, interleave...")
    parallel = serializers.BooleanField(help_text="It runs ahead or in parallel (and can hide its input's time).")
    seconds_per_batch = serializers.FloatField(help_text="The stage's own time per batch, its input's left out.")
    share = serializers.FloatField(help_text="Its share of the pipeline's own time (0-1).")


class InputBoundOutput(serializers.Serializer):
    verdict = serializers.ChoiceField(
        choices=["not", "moderately", "highly"],
        help_text="The TensorFlow Profiler's thresholds: under 5 % waiting not, 5-20 % moderately,"
        " 20 % and over highly.",
    )
    input_wait_fraction = serializers.FloatField(help_text="Share of the timed epochs the step waited for input.")
    thresholds = serializers.ListField(child=serializers.FloatField())


class ProfileOutput(serializers.Serializer):
    stages = StageOutput(many=True, help_text="From the source to the last stage.")
    batches = serializers.IntegerField(help_text="Batches of the traced epoch (the checking run's first).")
    slowest = serializers.CharField(help_text="The path of the stage with the most own time.")
    input_bound = InputBoundOutput(allow_null=True, help_text="From the timed runs; null when nothing was timed.")
    advice = serializers.CharField()


class GradingResultOutput(serializers.Serializer):
    verdict = serializers.ChoiceField(choices=Verdict.choices)
    message = serializers.CharField()
    checks = CheckOutput(many=True)
    timing = TimingOutput(allow_null=True)
    speedup = SpeedupOutput(allow_null=True)
    score = ScoreOutput()
    lint = LintOutput(many=True)
    device = serializers.CharField()
    output = serializers.CharField(help_text="What the checking run printed (the end of it).")
    profile = ProfileOutput(
        required=False,
        help_text="Where the learner's pipeline spends its time, stage by stage; absent when the checking run"
        " stopped in its first epoch (a failing first epoch cuts it short) and from older results.",
    )


class SubmissionCreatedOutput(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField()
    status = serializers.ChoiceField(choices=SubmissionStatus.choices)
    client_submission_id = serializers.UUIDField(allow_null=True)
    duplicate = serializers.BooleanField(
        help_text="True when this client_submission_id was already recorded: the first submission, as it is now."
    )


class PhaseOutput(serializers.Serializer):
    name = serializers.ChoiceField(choices=SubmissionStatus.choices, help_text="The status the grading is in.")
    # Named as clients read it; the annotation only says it is a field here, not Field's own label.
    label: Any = serializers.CharField(help_text='What it is doing, in words: "Timing round 2 of 3: your pipeline".')
    done = serializers.IntegerField(allow_null=True, help_text="Steps of the phase done (epochs, checks, timed runs).")
    total = serializers.IntegerField(allow_null=True, help_text="Steps of the phase in all.")
    seconds_left = serializers.FloatField(
        allow_null=True,
        help_text="About how long the grading has left, once the grader can tell: from the timed runs left,"
        " or before timing from how long the worker's last grading of the exercise took.",
    )


class SubmissionOutput(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    exercise: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    learner = serializers.CharField(source="learner.get_username", read_only=True)
    result = serializers.SerializerMethodField()
    phase = serializers.SerializerMethodField()
    error = serializers.CharField(source="error_message")

    class Meta:
        model = Submission
        fields = [
            "id",
            "url",
            "exercise",
            "learner",
            "status",
            "progress",
            "phase",
            "verdict",
            "score",
            "result",
            "error",
            "attempts",
            "created_at",
            "started_at",
            "finished_at",
            "code",
        ]

    def get_url(self, submission: Submission) -> str:
        return submission_url(submission, self.context.get("request"))

    @extend_schema_field(PhaseOutput)
    def get_phase(self, submission: Submission) -> dict[str, Any]:
        return submission_phase(submission)

    @extend_schema_field(GradingResultOutput(allow_null=True))
    def get_result(self, submission: Submission) -> dict[str, Any] | None:
        return submission.result


def submission_url(submission: Submission, request: Any) -> str:
    return reverse("submission-detail", kwargs={"submission_id": submission.pk}, request=request)
