"""The shape of a course file, as pydantic models; decks/SCHEMA.md documents it for authors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints
from pydantic_core import PydanticCustomError

from apps.content.bounds import CARD_CODE_MAX_CHARS, CARD_DEFINITION_MAX_CHARS, CARD_EXAMPLE_MAX_CHARS
from apps.content.text import authored_line, authored_text

SCHEMA_VERSION = 1
SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"

Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN, max_length=80)]
ChoiceKey = Annotated[str, StringConstraints(pattern=SLUG_PATTERN, max_length=40)]
Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=80)]


def _length_within(*, min_length: int = 0, max_length: int | None = None) -> Callable[[str], str]:
    """A length check on the normalized text, reported as pydantic reports its own string lengths."""

    def check(value: str) -> str:
        if len(value) < min_length:
            raise PydanticCustomError(
                "string_too_short",
                "String should have at least {min_length} character{plural}",
                {"min_length": min_length, "plural": "" if min_length == 1 else "s"},
            )
        if max_length is not None and len(value) > max_length:
            raise PydanticCustomError(
                "string_too_long",
                "String should have at most {max_length} character{plural}",
                {"max_length": max_length, "plural": "" if max_length == 1 else "s"},
            )
        return value

    return check


# Authored text is normalized before any rule sees it (apps/content/text.py), so lengths count what is stored.
AuthoredText = Annotated[str, AfterValidator(authored_text)]
AuthoredLine = Annotated[str, AfterValidator(authored_line)]
Title = Annotated[str, AfterValidator(authored_line), AfterValidator(_length_within(min_length=1, max_length=200))]
Text = Annotated[str, AfterValidator(authored_text), AfterValidator(_length_within(min_length=1))]
# A label as Anki writes them: one word (spaces separate tags).
Tag = Annotated[str, StringConstraints(pattern=r"^\S+$", max_length=100)]
# A card anywhere in the same course, written "deck-slug/card-slug".
CardRef = Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]+/[a-z0-9-]+$", max_length=161)]


class Document(BaseModel):
    """Unknown keys are errors, so a misspelt field is reported instead of silently dropped."""

    model_config = ConfigDict(extra="forbid", strict=True)


# A card's fields, bounded as apps/content/bounds.py says (the term is a Title, bounded alike).
CardDefinition = Annotated[
    str,
    AfterValidator(authored_text),
    AfterValidator(_length_within(min_length=1, max_length=CARD_DEFINITION_MAX_CHARS)),
]
CardExample = Annotated[
    str, AfterValidator(authored_text), AfterValidator(_length_within(max_length=CARD_EXAMPLE_MAX_CHARS))
]
CardCode = Annotated[str, AfterValidator(authored_text), AfterValidator(_length_within(max_length=CARD_CODE_MAX_CHARS))]


class CardDoc(Document):
    slug: Slug
    term: Title
    definition: CardDefinition
    example: CardExample = ""
    code: CardCode = ""
    # "html": definition and example are HTML of the small allow-list that imports keep (decks/SCHEMA.md).
    format: Literal["text", "html"] = "text"
    tags: list[Tag] = []
    # The Anki note the card came from; importing that note again updates this card.
    anki_guid: Annotated[str, StringConstraints(max_length=100)] = ""
    archived: bool = False


class DeckDoc(Document):
    slug: Slug
    title: Title
    description: AuthoredText = ""
    archived: bool = False
    cards: list[CardDoc] = Field(min_length=1)


class ChoiceDoc(Document):
    key: ChoiceKey
    text: Text
    correct: bool = False


class QuestionDoc(Document):
    slug: Slug
    kind: Literal["single_choice", "multiple_choice", "short_text", "numeric"]
    prompt: Text
    explanation: Text
    choices: list[ChoiceDoc] = []
    accepted_answers: list[
        Annotated[str, AfterValidator(authored_line), AfterValidator(_length_within(min_length=1, max_length=200))]
    ] = []
    answer: float | None = None
    tolerance: float | None = None
    # The cards this question tests; answering it in a quiz reviews each of them.
    cards: list[CardRef] = []
    archived: bool = False


class TermItem(Document):
    term: Title
    definition: Text
    card: CardRef | None = None


class ComparisonOption(Document):
    title: Title
    points: list[Text] = Field(min_length=1)


class ProseBlock(Document):
    kind: Literal["prose"]
    heading: AuthoredLine = ""
    text: Text


class TermsBlock(Document):
    kind: Literal["terms"]
    heading: AuthoredLine = ""
    items: list[TermItem] = Field(min_length=1)


class ComparisonBlock(Document):
    kind: Literal["comparison"]
    heading: AuthoredLine = ""
    options: list[ComparisonOption] = Field(min_length=2)


class StepsBlock(Document):
    kind: Literal["steps"]
    heading: AuthoredLine = ""
    steps: list[Text] = Field(min_length=1)


class CalloutBlock(Document):
    kind: Literal["callout"]
    heading: AuthoredLine = ""
    tone: Literal["warning", "info", "tip"]
    text: Text


class CodeBlock(Document):
    kind: Literal["code"]
    heading: AuthoredLine = ""
    language: Annotated[str, StringConstraints(pattern=r"^[a-z0-9+-]+$")] = "python"
    code: Text


class QuestionBlock(Document):
    kind: Literal["question"]
    heading: AuthoredLine = ""
    question: Slug


Block = Annotated[
    ProseBlock | TermsBlock | ComparisonBlock | StepsBlock | CalloutBlock | CodeBlock | QuestionBlock,
    Field(discriminator="kind"),
]
BlockDoc = ProseBlock | TermsBlock | ComparisonBlock | StepsBlock | CalloutBlock | CodeBlock | QuestionBlock


def block_payload(block: BlockDoc) -> dict[str, Any]:
    """What a lesson block stores beside its kind, heading and question: the rest of the block, defaults filled in."""
    return block.model_dump(mode="json", exclude={"kind", "heading", "question"})


class SectionDoc(Document):
    slug: Slug
    title: Title
    blocks: list[Block] = Field(min_length=1)


class ExerciseDoc(Document):
    slug: Slug
    title: Title
    prompt: Text
    entry_point: Identifier
    starter_code: AuthoredText = ""
    spec: dict[str, Any] = {}
    archived: bool = False
    # Slugs of the course's concepts the exercise practises (their cards are the ones it exercises).
    concepts: list[Slug] = []


class QuizDoc(Document):
    slug: Slug
    title: Title
    description: AuthoredText = ""
    archived: bool = False
    # Slugs of this lesson's questions, in the order the quiz lists them; at least one unless archived.
    questions: list[Slug] = []


class LessonDoc(Document):
    slug: Slug
    title: Title
    manual: AuthoredLine = ""
    subject: AuthoredLine = ""
    summary: AuthoredText = ""
    archived: bool = False
    sections: list[SectionDoc] = []
    decks: list[DeckDoc] = []
    questions: list[QuestionDoc] = []
    quizzes: list[QuizDoc] = []
    exercises: list[ExerciseDoc] = []


class ConceptDoc(Document):
    slug: Slug
    name: Title
    definition: Text
    cards: list[CardRef] = []
    archived: bool = False


class LinkDoc(Document):
    source: Slug
    target: Slug
    kind: Literal["prerequisite", "part_of", "enables", "related", "contrasts", "prevents"]


class RegionDoc(Document):
    slug: Slug
    title: Title
    description: Text
    cards: list[CardRef] = []
    archived: bool = False


class SceneDoc(Document):
    slug: Slug
    title: Title
    instructions: AuthoredLine = ""
    model_asset: Annotated[
        str, AfterValidator(authored_line), AfterValidator(_length_within(min_length=1, max_length=300))
    ]
    archived: bool = False
    regions: list[RegionDoc] = Field(min_length=1)


class CourseDoc(Document):
    """One file holds one course and everything in it."""

    version: Literal[1]
    slug: Slug
    title: Title
    subject: AuthoredLine = ""
    description: AuthoredText = ""
    archived: bool = False
    lessons: list[LessonDoc] = []
    concepts: list[ConceptDoc] = []
    links: list[LinkDoc] = []
    scenes: list[SceneDoc] = []
