"""Content models, one module per kind of material."""

from apps.content.models.concepts import Concept, ConceptLink, LinkKind
from apps.content.models.courses import BlockKind, Course, Lesson, LessonBlock, LessonSection
from apps.content.models.decks import Card, CardFormat, Deck, visible_card_filter
from apps.content.models.exercises import PipelineExercise
from apps.content.models.explorer import ExplorerRegion, ExplorerScene
from apps.content.models.questions import AcceptedAnswer, Choice, Question, QuestionKind
from apps.content.models.quizzes import Quiz, QuizQuestion

__all__ = [
    "AcceptedAnswer",
    "BlockKind",
    "Card",
    "CardFormat",
    "Choice",
    "Concept",
    "ConceptLink",
    "Course",
    "Deck",
    "ExplorerRegion",
    "ExplorerScene",
    "Lesson",
    "LessonBlock",
    "LessonSection",
    "LinkKind",
    "PipelineExercise",
    "Question",
    "QuestionKind",
    "Quiz",
    "QuizQuestion",
    "visible_card_filter",
]
