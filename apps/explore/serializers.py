"""Request and response bodies of the constellation, region visit and activity endpoints."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.common.fields import AwareDateTimeField, CanonicalUUIDField, SingleLineCharField
from apps.common.query import QueryIntegerField
from apps.content.models import LinkKind
from apps.content.serializers import CardReferenceOutput
from apps.explore.activity import ACTIVITY_KINDS
from apps.explore.models import RegionVisit

MAX_ACTIVITY_PAGE = 200
DEFAULT_ACTIVITY_PAGE = 50


class NodeLinkOutput(serializers.Serializer):
    direction = serializers.ChoiceField(
        choices=["outgoing", "incoming"], help_text="outgoing: this concept is the link's source."
    )
    kind = serializers.ChoiceField(choices=LinkKind.choices)
    # A declared field named like Field.label: DRF moves it into _declared_fields, so no clash at run time.
    label = serializers.CharField(  # type: ignore[assignment]
        help_text='Reads from this concept: "batching is part of input pipeline".'
    )
    concept = serializers.CharField(help_text="Slug of the concept at the other end.")
    concept_name = serializers.CharField()


class NodeOutput(serializers.Serializer):
    slug = serializers.CharField(source="concept.slug")
    name = serializers.CharField(source="concept.name")
    definition = serializers.CharField(source="concept.definition")
    x = serializers.FloatField()
    y = serializers.FloatField()
    z = serializers.FloatField()
    links = NodeLinkOutput(many=True)
    cards = CardReferenceOutput(many=True)
    mastery = serializers.FloatField(
        help_text="Mean over the cards of recall now times stability / 21 days (at most 1): recalled and lasting; "
        "new count 0."
    )
    cards_studied = serializers.IntegerField()
    cards_total = serializers.IntegerField()


class EdgeOutput(serializers.Serializer):
    # A declared field named like Field.source: DRF moves it into _declared_fields, so no clash at run time.
    source = serializers.CharField()  # type: ignore[assignment]
    target = serializers.CharField()
    kind = serializers.ChoiceField(choices=LinkKind.choices)
    label = serializers.CharField()  # type: ignore[assignment]


class LayoutOutput(serializers.Serializer):
    digest = serializers.CharField(help_text="Changes exactly when the concepts or links change.")
    computed_at = serializers.DateTimeField()


class ConstellationOutput(serializers.Serializer):
    course = serializers.CharField(source="course.slug")
    layout = LayoutOutput()
    nodes = NodeOutput(many=True)
    edges = EdgeOutput(many=True)


class RegionVisitInput(serializers.Serializer):
    client_visit_id = CanonicalUUIDField(
        required=False, help_text="Made by the client; sending it again records nothing new."
    )


class RegionVisitOutput(serializers.ModelSerializer):
    scene = serializers.CharField(source="region.scene.slug")
    region = serializers.CharField(source="region.slug")
    duplicate = serializers.SerializerMethodField()

    class Meta:
        model = RegionVisit
        fields = ["id", "scene", "region", "visited_at", "client_visit_id", "duplicate"]

    @extend_schema_field(
        serializers.BooleanField(help_text="True when this client_visit_id was already recorded: the first visit.")
    )
    def get_duplicate(self, visit: RegionVisit) -> bool:
        return bool(self.context.get("duplicate", False))


class ActivityQuery(serializers.Serializer):
    kind = SingleLineCharField(
        required=False, help_text=f"One kind or several, comma-separated: {', '.join(ACTIVITY_KINDS)}."
    )
    before = AwareDateTimeField(
        required=False, earliest=None, allow_future=True, help_text="Only items strictly older than this time."
    )
    page_size = QueryIntegerField(min_value=1, max_value=MAX_ACTIVITY_PAGE, default=DEFAULT_ACTIVITY_PAGE)

    def validate_kind(self, value: str) -> list[str]:
        kinds = [part.strip() for part in value.split(",") if part.strip()]
        unknown = [kind for kind in kinds if kind not in ACTIVITY_KINDS]
        if unknown or not kinds:
            raise serializers.ValidationError(
                f"Unknown kind {', '.join(unknown) or repr(value)}; use one of {', '.join(ACTIVITY_KINDS)}."
            )
        return kinds


class ActivityItemOutput(serializers.Serializer):
    id = serializers.CharField(help_text="Stable within a kind: kind:key.")
    kind = serializers.ChoiceField(choices=list(ACTIVITY_KINDS))
    at = serializers.DateTimeField()
    summary = serializers.CharField()
    detail = serializers.DictField(help_text="Per kind; see the activity documentation.")


class ActivityPageOutput(serializers.Serializer):
    results = ActivityItemOutput(many=True)
    next = serializers.CharField(allow_null=True, help_text="URL of the next, older page; null on the last.")
    next_before = serializers.DateTimeField(allow_null=True, help_text="The before cursor of the next page.")
