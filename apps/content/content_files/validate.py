"""The rules a course file must follow beyond its shape (decks/SCHEMA.md lists them)."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from apps.content.card_markup import ALLOWED_TAGS, MEDIA_PATH_PREFIX, card_html_clean
from apps.content.content_files.schema import (
    SLUG_PATTERN,
    Block,
    BlockDoc,
    CourseDoc,
    LessonDoc,
    QuestionDoc,
    QuizDoc,
)
from apps.content.content_files.source import ContentError, Location, ParsedFile
from apps.content.course_media import course_media_problems
from apps.content.text import normalize_text

_SLUG_HINT = "must be a slug: lower-case letters and digits in words joined by single hyphens"

# Words that carry no meaning of their own in a term ("Where to put cache", "In-memory vs streaming").
_FUNCTION_WORDS = frozenset(
    "a an and as at by for from in into is of on or the to under vs versus what when where which with".split()  # noqa: SIM905 - one line reads better
)
_WORD = re.compile(r"\w+")
# A dotted name written as code, optionally called: `tf.data.AUTOTUNE`, `Dataset.map(fn)`, `cache()`.
_CODE_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*(\()?")
# A keyword argument written with its value: `deterministic=False`.
_KEYWORD_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*=")


def _data_location(data: Any, pydantic_location: tuple[Any, ...]) -> Location:
    """Drop the discriminator tags pydantic adds to union locations (e.g. 'prose')."""
    location: list[str | int] = []
    current = data
    tag_dropped = False
    for part in pydantic_location:
        # Once per item: a question block's missing `question` is named like its tag, and is a real field.
        if not tag_dropped and isinstance(current, dict) and part not in current and part == current.get("kind"):
            tag_dropped = True
            continue
        tag_dropped = False
        location.append(part)
        if isinstance(current, dict):
            current = current.get(part)
        elif isinstance(current, list) and isinstance(part, int) and part < len(current):
            current = current[part]
        else:
            current = None
    return tuple(location)


def _message(error: ErrorDetails) -> str:
    if error["type"] == "string_pattern_mismatch" and error.get("ctx", {}).get("pattern") == SLUG_PATTERN:
        return _SLUG_HINT
    if error["type"] == "missing":
        return "this field is required"
    if error["type"] == "extra_forbidden":
        return "unknown field (check its spelling against decks/SCHEMA.md)"
    if error["type"] == "union_tag_invalid":
        expected = error.get("ctx", {}).get("expected_tags", "")
        return f"unknown block kind; expected one of {expected}"
    return str(error["msg"]).rstrip(".")


def _words(text: str) -> list[str]:
    """Case-folded words; backticks, dots, brackets and other punctuation only separate them."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def _forms(word: str) -> set[str]:
    """The word and its regular inflections: batches, shuffled, caching, mapped, mapping."""
    forms = {word, f"{word}s", f"{word}es", f"{word}d", f"{word}ed", f"{word}ing"}
    if len(word) >= 3 and word[-1].isalpha():
        forms |= {f"{word}{word[-1]}ed", f"{word}{word[-1]}ing"}
        if word.endswith("e"):
            forms.add(f"{word[:-1]}ing")
        if word.endswith("y"):
            forms.add(f"{word[:-1]}ies")
    return forms


def _bare_names(term: str) -> list[str]:
    """The short names a term written as code is also known by.

    The last part of a call (`Dataset.map(fn)` is also `map`), of a dotted name that ends in a
    class or constant (`tf.data.AUTOTUNE` is also `AUTOTUNE`, `tf.train.Example` also `Example`)
    and the name of a keyword argument (`deterministic=False`). A dotted module path such as
    `tf.data` has no bare name: its last part is an ordinary word.
    """
    names: list[str] = []
    for match in _CODE_NAME.finditer(term):
        dotted, called = match.group(1), match.group(2)
        last = dotted.rsplit(".", 1)[-1]
        if called or ("." in dotted and last != last.lower()):
            names.append(last)
    names += [match.group(1) for match in _KEYWORD_NAME.finditer(term)]
    return names


def term_in_definition(term: str, definition: str) -> str | None:
    """What of the term its definition gives away, or None.

    A definition gives its term away when it holds every word of the term (function words aside,
    in any order, in any regular inflection), or the bare name of a term written as code.
    """
    found = set(_words(definition))
    words = [word for word in _words(term) if word not in _FUNCTION_WORDS] or _words(term)
    if words and all(_forms(word) & found for word in words):
        return term
    for name in _bare_names(term):
        if _forms(name.casefold()) & found:
            return name
    return None


def course_doc_from_file(parsed: ParsedFile) -> tuple[CourseDoc | None, list[ContentError]]:
    try:
        return CourseDoc.model_validate(parsed.data), []
    except ValidationError as exc:
        errors = [
            parsed.error(_data_location(parsed.data, tuple(error["loc"])), _message(error))
            for error in exc.errors(include_url=False)
        ]
        return None, errors


_BLOCK_ADAPTER: TypeAdapter[BlockDoc] = TypeAdapter(Block)


def block_doc_from_data(data: dict[str, Any]) -> tuple[BlockDoc | None, list[tuple[Location, str]]]:
    """One lesson block checked on its own, as a course file's block is: the block, or where and why it is wrong."""
    try:
        return _BLOCK_ADAPTER.validate_python(data), []
    except ValidationError as exc:
        return None, [
            (_data_location(data, tuple(error["loc"])), _message(error)) for error in exc.errors(include_url=False)
        ]


def _duplicates(parsed: ParsedFile, items: Iterable[tuple[Location, str]], what: str) -> list[ContentError]:
    items = list(items)
    counts = Counter(key for _, key in items)
    return [
        parsed.error(location, f"{what} {key!r} is used more than once") for location, key in items if counts[key] > 1
    ]


def _question_errors(parsed: ParsedFile, question: QuestionDoc, at: Location) -> list[ContentError]:
    errors: list[ContentError] = []

    def forbid(name: str, present: bool) -> None:
        if present:
            errors.append(parsed.error((*at, name), f"a {question.kind} question has no {name}"))

    if question.kind in {"single_choice", "multiple_choice"}:
        correct = sum(choice.correct for choice in question.choices)
        if len(question.choices) < 2:
            errors.append(parsed.error((*at, "choices"), "a choice question needs at least two choices"))
        elif question.kind == "single_choice" and correct != 1:
            errors.append(
                parsed.error(
                    (*at, "choices"), f"a single_choice question needs exactly one correct choice, not {correct}"
                )
            )
        elif question.kind == "multiple_choice" and correct < 1:
            errors.append(parsed.error((*at, "choices"), "a multiple_choice question needs a correct choice"))
        errors += _duplicates(
            parsed,
            (((*at, "choices", i, "key"), choice.key) for i, choice in enumerate(question.choices)),
            "choice key",
        )
        forbid("accepted_answers", bool(question.accepted_answers))
        forbid("answer", question.answer is not None)
        forbid("tolerance", question.tolerance is not None)
    elif question.kind == "short_text":
        if not question.accepted_answers:
            errors.append(parsed.error((*at, "accepted_answers"), "a short_text question needs an accepted answer"))
        # Compared as the grader compares answers: "TF Record" and "TFRecord" are one answer.
        graded_as = Counter(normalize_text(text) for text in question.accepted_answers)
        errors += [
            parsed.error(
                (*at, "accepted_answers", i),
                f"accepted answer {text!r} is used more than once (compared without case, spaces or punctuation)",
            )
            for i, text in enumerate(question.accepted_answers)
            if graded_as[normalize_text(text)] > 1
        ]
        forbid("choices", bool(question.choices))
        forbid("answer", question.answer is not None)
        forbid("tolerance", question.tolerance is not None)
    else:
        if question.answer is None:
            errors.append(parsed.error((*at, "answer"), "a numeric question needs an answer"))
        if question.tolerance is None:
            errors.append(parsed.error((*at, "tolerance"), "a numeric question needs a tolerance"))
        elif question.tolerance < 0:
            errors.append(parsed.error((*at, "tolerance"), "the tolerance cannot be negative"))
        forbid("choices", bool(question.choices))
        forbid("accepted_answers", bool(question.accepted_answers))
    return errors


def _card_ref_errors(parsed: ParsedFile, refs: list[str], at: Location, card_refs: set[str]) -> list[ContentError]:
    errors = [
        parsed.error((*at, i), f"no card {ref!r} in this course") for i, ref in enumerate(refs) if ref not in card_refs
    ]
    return errors + _duplicates(parsed, (((*at, i), ref) for i, ref in enumerate(refs)), "card")


def _quiz_errors(
    parsed: ParsedFile, quiz: QuizDoc, at: Location, own_questions: set[str], question_lessons: dict[str, str]
) -> list[ContentError]:
    errors = _duplicates(parsed, (((*at, "questions", i), slug) for i, slug in enumerate(quiz.questions)), "question")
    if not quiz.questions and not quiz.archived:
        errors.append(parsed.error((*at, "questions"), "a quiz needs at least one question"))
    for i, slug in enumerate(quiz.questions):
        if slug in own_questions:
            continue
        owner = question_lessons.get(slug)
        reason = (
            f"question {slug!r} belongs to lesson {owner!r}; a quiz takes only its own lesson's questions"
            if owner
            else f"no question {slug!r} in this lesson"
        )
        errors.append(parsed.error((*at, "questions", i), reason))
    return errors


def _lesson_errors(
    parsed: ParsedFile, lesson: LessonDoc, at: Location, card_refs: set[str], question_lessons: dict[str, str]
) -> list[ContentError]:
    errors: list[ContentError] = []
    errors += _duplicates(
        parsed, (((*at, "sections", i, "slug"), s.slug) for i, s in enumerate(lesson.sections)), "section slug"
    )
    for d, deck in enumerate(lesson.decks):
        errors += _duplicates(
            parsed,
            (((*at, "decks", d, "cards", i, "slug"), card.slug) for i, card in enumerate(deck.cards)),
            "card slug",
        )
    for q, question in enumerate(lesson.questions):
        errors += _question_errors(parsed, question, (*at, "questions", q))
        errors += _card_ref_errors(parsed, question.cards, (*at, "questions", q, "cards"), card_refs)
    question_slugs = {question.slug for question in lesson.questions}
    for z, quiz in enumerate(lesson.quizzes):
        errors += _quiz_errors(parsed, quiz, (*at, "quizzes", z), question_slugs, question_lessons)
    for s, section in enumerate(lesson.sections):
        for b, block in enumerate(section.blocks):
            block_at = (*at, "sections", s, "blocks", b)
            if block.kind == "question" and block.question not in question_slugs:
                errors.append(parsed.error((*block_at, "question"), f"no question {block.question!r} in this lesson"))
            if block.kind == "terms":
                for i, item in enumerate(block.items):
                    if item.card is not None and item.card not in card_refs:
                        errors.append(
                            parsed.error((*block_at, "items", i, "card"), f"no card {item.card!r} in this course")
                        )
    return errors


def course_doc_errors(parsed: ParsedFile, course: CourseDoc) -> list[ContentError]:
    """Every rule that one file can check on its own."""
    errors: list[ContentError] = []
    lessons = course.lessons
    card_refs = {f"{deck.slug}/{card.slug}" for lesson in lessons for deck in lesson.decks for card in deck.cards}
    active_cards = {
        f"{deck.slug}/{card.slug}"
        for lesson in lessons
        for deck in lesson.decks
        for card in deck.cards
        if not (card.archived or deck.archived or lesson.archived)
    }

    errors += _match_giveaway_errors(parsed, course)
    errors += _card_markup_errors(parsed, course)
    for kind, items in site_wide_slugs(course).items():
        errors += _duplicates(parsed, items, f"{kind} slug")
    errors += _duplicates(
        parsed, ((("concepts", i, "slug"), concept.slug) for i, concept in enumerate(course.concepts)), "concept slug"
    )

    question_lessons = {question.slug: lesson.slug for lesson in lessons for question in lesson.questions}
    for i, lesson in enumerate(lessons):
        errors += _lesson_errors(parsed, lesson, ("lessons", i), card_refs, question_lessons)

    concept_slugs = {concept.slug for concept in course.concepts}
    covered: set[str] = set()
    for c, concept in enumerate(course.concepts):
        for r, ref in enumerate(concept.cards):
            if ref not in card_refs:
                errors.append(parsed.error(("concepts", c, "cards", r), f"no card {ref!r} in this course"))
            covered.add(ref)
    for ref in sorted(active_cards - covered):
        deck_slug, card_slug = ref.split("/")
        location = _card_location(course, deck_slug, card_slug)
        errors.append(parsed.error(location, f"card {ref!r} belongs to no concept; add it to a concept's cards"))

    for i, lesson in enumerate(lessons):
        for e, exercise in enumerate(lesson.exercises):
            for c, slug in enumerate(exercise.concepts):
                if slug not in concept_slugs:
                    location = ("lessons", i, "exercises", e, "concepts", c)
                    errors.append(parsed.error(location, f"no concept {slug!r} in this course"))

    seen_links: dict[tuple[str, str, str], int] = {}
    for i, link in enumerate(course.links):
        for end in ("source", "target"):
            if getattr(link, end) not in concept_slugs:
                errors.append(parsed.error(("links", i, end), f"no concept {getattr(link, end)!r} in this course"))
        if link.source == link.target:
            errors.append(parsed.error(("links", i), "a concept cannot link to itself"))
        key = (link.source, link.target, link.kind)
        if key in seen_links:
            errors.append(parsed.error(("links", i), f"the same link is already given as links[{seen_links[key]}]"))
        seen_links.setdefault(key, i)

    for s, scene in enumerate(course.scenes):
        errors += _duplicates(
            parsed, ((("scenes", s, "regions", i, "slug"), r.slug) for i, r in enumerate(scene.regions)), "region slug"
        )
        for r, region in enumerate(scene.regions):
            for i, ref in enumerate(region.cards):
                if ref not in card_refs:
                    errors.append(
                        parsed.error(("scenes", s, "regions", r, "cards", i), f"no card {ref!r} in this course")
                    )
    return errors


def _match_giveaway_errors(parsed: ParsedFile, course: CourseDoc) -> list[ContentError]:
    """Match the Pairs lays every visible card's definition beside the terms: none may name its own."""
    errors: list[ContentError] = []
    if course.archived:
        return errors
    for i, lesson in enumerate(course.lessons):
        for d, deck in enumerate(lesson.decks):
            if lesson.archived or deck.archived:
                continue
            for c, card in enumerate(deck.cards):
                given_away = None if card.archived else term_in_definition(card.term, card.definition)
                if given_away is not None:
                    errors.append(
                        parsed.error(
                            ("lessons", i, "decks", d, "cards", c, "definition"),
                            f"the definition contains its term ({given_away!r}), so a Match the Pairs board "
                            "pairs it by reading; describe the idea without naming it",
                        )
                    )
    return errors


def _card_markup_errors(parsed: ParsedFile, course: CourseDoc) -> list[ContentError]:
    """An HTML card holds only the allowed markup: clients show it as HTML, so anything else could run there."""
    errors: list[ContentError] = []
    for i, lesson in enumerate(course.lessons):
        for d, deck in enumerate(lesson.decks):
            for c, card in enumerate(deck.cards):
                if card.format != "html":
                    continue
                for name in ("definition", "example"):
                    value = getattr(card, name)
                    errors += [
                        parsed.error(("lessons", i, "decks", d, "cards", c, name), problem)
                        for problem in course_media_problems(value)
                    ]
                    if card_html_clean(value) != value:
                        errors.append(
                            parsed.error(
                                ("lessons", i, "decks", d, "cards", c, name),
                                "holds HTML an HTML card may not: only "
                                f"{', '.join(sorted(ALLOWED_TAGS))} elements, src and alt on img, src and controls "
                                f"on audio with media of this site ({MEDIA_PATH_PREFIX}...), and no comments",
                            )
                        )
    return errors


def _card_location(course: CourseDoc, deck_slug: str, card_slug: str) -> Location:
    for i, lesson in enumerate(course.lessons):
        for d, deck in enumerate(lesson.decks):
            if deck.slug == deck_slug:
                for c, card in enumerate(deck.cards):
                    if card.slug == card_slug:
                        return ("lessons", i, "decks", d, "cards", c)
    return ()


def site_wide_slugs(course: CourseDoc) -> dict[str, list[tuple[Location, str]]]:
    """Slugs that must be unique across the whole site, by kind, with where each is written."""
    lessons = course.lessons
    return {
        "lesson": [(("lessons", i, "slug"), lesson.slug) for i, lesson in enumerate(lessons)],
        "deck": [
            (("lessons", i, "decks", d, "slug"), deck.slug)
            for i, lesson in enumerate(lessons)
            for d, deck in enumerate(lesson.decks)
        ],
        "question": [
            (("lessons", i, "questions", q, "slug"), question.slug)
            for i, lesson in enumerate(lessons)
            for q, question in enumerate(lesson.questions)
        ],
        "quiz": [
            (("lessons", i, "quizzes", z, "slug"), quiz.slug)
            for i, lesson in enumerate(lessons)
            for z, quiz in enumerate(lesson.quizzes)
        ],
        "exercise": [
            (("lessons", i, "exercises", e, "slug"), exercise.slug)
            for i, lesson in enumerate(lessons)
            for e, exercise in enumerate(lesson.exercises)
        ],
        "scene": [(("scenes", i, "slug"), scene.slug) for i, scene in enumerate(course.scenes)],
    }
