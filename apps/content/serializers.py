"""Response bodies of the content endpoints. None of them carries an answer key."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from apps.content.choice_ids import board_choice_keys, board_nonce_draw
from apps.content.models import (
    BlockKind,
    Card,
    Concept,
    ConceptLink,
    Course,
    Deck,
    ExplorerRegion,
    ExplorerScene,
    Lesson,
    LessonBlock,
    LessonSection,
    PipelineExercise,
    Question,
)
from apps.content.outputs import course_summary_data


class CourseSummaryOutput(serializers.ModelSerializer):
    class Meta:
        model = Course
        fields = ["slug", "title", "subject", "description"]

    def to_representation(self, course: Course) -> dict[str, Any]:
        return course_summary_data(course)


class LessonSummaryOutput(serializers.ModelSerializer):
    class Meta:
        model = Lesson
        fields = ["slug", "title", "manual", "subject", "summary"]


class SceneSummaryOutput(serializers.ModelSerializer):
    class Meta:
        model = ExplorerScene
        fields = ["slug", "title"]


class CourseOutput(serializers.ModelSerializer):
    lessons = LessonSummaryOutput(many=True)
    scenes = SceneSummaryOutput(many=True)

    class Meta:
        model = Course
        fields = ["slug", "title", "subject", "description", "lessons", "scenes"]


class PublicChoiceOutput(serializers.Serializer):
    key = serializers.CharField(help_text="A random id, new in every response: neither the authored key nor the order.")
    text = serializers.CharField()


class PublicQuestionOutput(serializers.ModelSerializer):
    """A question as a learner sees it before answering: no correct choice, answer or explanation.

    Authored keys and order follow the course file (the correct choice is often the first, `a`), so
    every response shows the choices in a fresh random order, each behind an id derived from a fresh
    board: POST /questions/{slug}/answers/ reads an answer back from the board and the ids.
    """

    board = serializers.CharField(
        read_only=True,
        help_text="New in every response; send it back with a choice answer given in place (POST "
        "/questions/{slug}/answers/): the choice ids mean something only with it.",
    )
    choices = PublicChoiceOutput(many=True, read_only=True)

    class Meta:
        model = Question
        fields = ["slug", "kind", "prompt", "board", "choices"]

    def to_representation(self, question: Question) -> dict[str, Any]:
        nonce = board_nonce_draw()
        keys = board_choice_keys(question=question, nonce=nonce)
        texts = {choice.key: choice.text for choice in question.choices.all()}
        shown = [(choice_id, keys[choice_id]) for choice_id in sorted(keys)]
        return {
            "slug": question.slug,
            "kind": question.kind,
            "prompt": question.prompt,
            "board": nonce,
            "choices": [{"key": choice_id, "text": texts[key]} for choice_id, key in shown if key in texts],
        }


class DeckOutput(serializers.ModelSerializer):
    course = serializers.CharField(source="lesson.course.slug")
    lesson = serializers.CharField(source="lesson.slug")
    card_count = serializers.IntegerField(help_text="Cards that are not archived.")

    class Meta:
        model = Deck
        fields = ["slug", "title", "description", "course", "lesson", "card_count"]


class CardOutput(serializers.ModelSerializer):
    deck = serializers.CharField(source="deck.slug")
    tags = serializers.ListField(child=serializers.CharField(), help_text="Labels carried over from Anki or CSV.")

    class Meta:
        model = Card
        fields = ["id", "slug", "deck", "term", "definition", "example", "code", "format", "tags", "anki_guid"]


class DeckCardOutput(serializers.ModelSerializer):
    tags = serializers.ListField(child=serializers.CharField(), help_text="Labels carried over from Anki or CSV.")

    class Meta:
        model = Card
        fields = ["id", "slug", "term", "definition", "example", "code", "format", "tags", "anki_guid"]


class ExerciseSummaryOutput(serializers.ModelSerializer):
    class Meta:
        model = PipelineExercise
        fields = ["slug", "title"]


class CardReferenceOutput(serializers.ModelSerializer):
    deck = serializers.CharField(source="deck.slug")

    class Meta:
        model = Card
        fields = ["id", "deck", "slug", "term"]


class PractisedConceptOutput(serializers.ModelSerializer):
    cards = CardReferenceOutput(many=True, help_text="The concept's cards a learner can study.")

    class Meta:
        model = Concept
        fields = ["slug", "name", "cards"]


class ExerciseOutput(serializers.ModelSerializer):
    lesson = serializers.CharField(source="lesson.slug")
    concepts = PractisedConceptOutput(many=True, help_text="The concepts the exercise practises, with their cards.")

    class Meta:
        model = PipelineExercise
        fields = ["slug", "title", "lesson", "prompt", "entry_point", "starter_code", "concepts"]


# One serializer per block kind, for the documentation of the flattened block payloads.
class _BlockBase(serializers.Serializer):
    kind = serializers.ChoiceField(choices=BlockKind.choices)
    heading = serializers.CharField(allow_blank=True)


class _TermItem(serializers.Serializer):
    term = serializers.CharField()
    definition = serializers.CharField()
    card = serializers.CharField(allow_null=True, help_text="deck-slug/card-slug, or null.")


class _ComparisonOption(serializers.Serializer):
    title = serializers.CharField()
    points = serializers.ListField(child=serializers.CharField())


class ProseBlockOutput(_BlockBase):
    text = serializers.CharField()


class TermsBlockOutput(_BlockBase):
    items = _TermItem(many=True)


class ComparisonBlockOutput(_BlockBase):
    options = _ComparisonOption(many=True)


class StepsBlockOutput(_BlockBase):
    steps = serializers.ListField(child=serializers.CharField())


class CalloutBlockOutput(_BlockBase):
    tone = serializers.ChoiceField(choices=["warning", "info", "tip"])
    text = serializers.CharField()


class CodeBlockOutput(_BlockBase):
    language = serializers.CharField()
    code = serializers.CharField()


class QuestionBlockOutput(_BlockBase):
    question = PublicQuestionOutput()


_BLOCK_OUTPUTS: dict[str, type[serializers.Serializer]] = {
    BlockKind.PROSE: ProseBlockOutput,
    BlockKind.TERMS: TermsBlockOutput,
    BlockKind.COMPARISON: ComparisonBlockOutput,
    BlockKind.STEPS: StepsBlockOutput,
    BlockKind.CALLOUT: CalloutBlockOutput,
    BlockKind.CODE: CodeBlockOutput,
    BlockKind.QUESTION: QuestionBlockOutput,
}


@extend_schema_field(
    PolymorphicProxySerializer(
        component_name="LessonBlock",
        serializers={str(kind): serializer for kind, serializer in _BLOCK_OUTPUTS.items()},
        resource_type_field_name="kind",
    )
)
class BlockField(serializers.Field):
    def to_representation(self, block: LessonBlock) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": block.kind, "heading": block.heading, **block.payload}
        if block.kind == BlockKind.QUESTION:
            data["question"] = PublicQuestionOutput(block.question).data
        return data


class SectionOutput(serializers.ModelSerializer):
    blocks = serializers.ListField(child=BlockField(), source="blocks.all")

    class Meta:
        model = LessonSection
        fields = ["slug", "title", "blocks"]


class LessonOutput(serializers.ModelSerializer):
    course = serializers.CharField(source="course.slug")
    sections = SectionOutput(many=True)
    decks = DeckOutput(many=True)
    questions = PublicQuestionOutput(many=True)
    exercises = ExerciseSummaryOutput(many=True)

    class Meta:
        model = Lesson
        fields = [
            "slug",
            "title",
            "course",
            "manual",
            "subject",
            "summary",
            "sections",
            "decks",
            "questions",
            "exercises",
        ]


class ConceptOutput(serializers.ModelSerializer):
    cards: serializers.PrimaryKeyRelatedField[Card] = serializers.PrimaryKeyRelatedField(
        many=True, read_only=True, help_text="Card ids."
    )

    class Meta:
        model = Concept
        fields = ["slug", "name", "definition", "cards"]


class ConceptLinkOutput(serializers.ModelSerializer):
    # A declared field named like Field.source: DRF moves it into _declared_fields, so no clash at run time.
    source = serializers.CharField(source="source.slug")  # type: ignore[assignment]
    target = serializers.CharField(source="target.slug")

    class Meta:
        model = ConceptLink
        fields = ["source", "target", "kind"]


class ConceptGraphOutput(serializers.Serializer):
    course = serializers.CharField()
    concepts = ConceptOutput(many=True)
    links = ConceptLinkOutput(many=True)


class RegionOutput(serializers.ModelSerializer):
    cards = CardReferenceOutput(many=True)
    visited = serializers.SerializerMethodField()
    last_visited_at = serializers.SerializerMethodField()

    class Meta:
        model = ExplorerRegion
        fields = ["id", "slug", "title", "description", "cards", "visited", "last_visited_at"]

    # Annotated by apps.explore.selectors.scene_get for the learner asking; absent means never visited.
    def get_visited(self, region: ExplorerRegion) -> bool:
        return getattr(region, "last_visited_at", None) is not None

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_last_visited_at(self, region: ExplorerRegion) -> str | None:
        moment = getattr(region, "last_visited_at", None)
        return serializers.DateTimeField().to_representation(moment) if moment is not None else None


class SceneOutput(serializers.ModelSerializer):
    course = serializers.CharField(source="course.slug")
    model_url = serializers.SerializerMethodField(
        help_text="Absolute URL of the scene's 3D model: EXPLORER_ASSET_BASE_URL joined with its path, on this "
        "server's address when that setting is a path."
    )
    regions = RegionOutput(many=True)

    class Meta:
        model = ExplorerScene
        fields = ["slug", "title", "course", "instructions", "model_url", "regions"]

    def get_model_url(self, scene: ExplorerScene) -> str:
        url = explorer_asset_url(scene.model_asset)
        request = self.context.get("request")
        # Apps on other origins need the host too when the assets are served by this server.
        return request.build_absolute_uri(url) if request is not None and url.startswith("/") else url


def explorer_asset_url(path: str) -> str:
    """Where clients fetch a scene's model: the asset base URL and the path, with exactly one slash between.

    A path that is already a full URL is used as it is.
    """
    if "://" in path or path.startswith("//"):
        return path
    return settings.EXPLORER_ASSET_BASE_URL.rstrip("/") + "/" + path.lstrip("/")


class SceneListOutput(serializers.ModelSerializer):
    course = serializers.CharField(source="course.slug")

    class Meta:
        model = ExplorerScene
        fields = ["slug", "title", "course", "instructions"]
