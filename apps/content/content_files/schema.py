"""The shape of a course file, as pydantic models; decks/SCHEMA.md documents it for authors."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

SCHEMA_VERSION = 1
SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"

Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN, max_length=80)]
ChoiceKey = Annotated[str, StringConstraints(pattern=SLUG_PATTERN, max_length=40)]
Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=80)]
Title = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Text = Annotated[str, StringConstraints(min_length=1)]
# A card anywhere in the same course, written "deck-slug/card-slug".
CardRef = Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]+/[a-z0-9-]+$", max_length=161)]


class Document(BaseModel):
    """Unknown keys are errors, so a misspelt field is reported instead of silently dropped."""

    model_config = ConfigDict(extra="forbid", strict=True)


class CardDoc(Document):
    slug: Slug
    term: Title
    definition: Text
    example: str = ""
    code: str = ""
    archived: bool = False


class DeckDoc(Document):
    slug: Slug
    title: Title
    description: str = ""
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
    accepted_answers: list[Annotated[str, StringConstraints(min_length=1, max_length=200)]] = []
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
    heading: str = ""
    text: Text


class TermsBlock(Document):
    kind: Literal["terms"]
    heading: str = ""
    items: list[TermItem] = Field(min_length=1)


class ComparisonBlock(Document):
    kind: Literal["comparison"]
    heading: str = ""
    options: list[ComparisonOption] = Field(min_length=2)


class StepsBlock(Document):
    kind: Literal["steps"]
    heading: str = ""
    steps: list[Text] = Field(min_length=1)


class CalloutBlock(Document):
    kind: Literal["callout"]
    heading: str = ""
    tone: Literal["warning", "info", "tip"]
    text: Text


class CodeBlock(Document):
    kind: Literal["code"]
    heading: str = ""
    language: Annotated[str, StringConstraints(pattern=r"^[a-z0-9+-]+$")] = "python"
    code: Text


class QuestionBlock(Document):
    kind: Literal["question"]
    heading: str = ""
    question: Slug


Block = Annotated[
    ProseBlock | TermsBlock | ComparisonBlock | StepsBlock | CalloutBlock | CodeBlock | QuestionBlock,
    Field(discriminator="kind"),
]


class SectionDoc(Document):
    slug: Slug
    title: Title
    blocks: list[Block] = Field(min_length=1)


class ExerciseDoc(Document):
    slug: Slug
    title: Title
    prompt: Text
    entry_point: Identifier
    starter_code: str = ""
    spec: dict[str, Any] = {}
    archived: bool = False


class QuizDoc(Document):
    slug: Slug
    title: Title
    description: str = ""
    archived: bool = False
    # Slugs of this lesson's questions, in the order the quiz lists them; at least one unless archived.
    questions: list[Slug] = []


class LessonDoc(Document):
    slug: Slug
    title: Title
    manual: str = ""
    subject: str = ""
    summary: str = ""
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
    instructions: str = ""
    model_asset: Annotated[str, StringConstraints(min_length=1, max_length=300)]
    archived: bool = False
    regions: list[RegionDoc] = Field(min_length=1)


class CourseDoc(Document):
    """One file holds one course and everything in it."""

    version: Literal[1]
    slug: Slug
    title: Title
    subject: str = ""
    description: str = ""
    archived: bool = False
    lessons: list[LessonDoc] = []
    concepts: list[ConceptDoc] = []
    links: list[LinkDoc] = []
    scenes: list[SceneDoc] = []
