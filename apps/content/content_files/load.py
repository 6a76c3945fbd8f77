"""Loading course files: validate every file first, then upsert by slug in one transaction."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from django.db import models, transaction
from django.db.models import Q

from apps.content.content_files.report import Action, LoadReport, item_label
from apps.content.content_files.schema import CourseDoc, LessonDoc, block_payload
from apps.content.content_files.source import (
    ContentError,
    ContentFilesInvalid,
    ContentSource,
    ParsedFile,
    parse_source,
)
from apps.content.content_files.validate import course_doc_errors, course_doc_from_file, site_wide_slugs
from apps.content.models import (
    AcceptedAnswer,
    Card,
    Choice,
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
    Quiz,
    QuizQuestion,
)
from apps.content.services import positions_park

ProgressCallback = Callable[[int, int], None]
# Rows written per statement and per progress report on large decks.
CHUNK_SIZE = 500

# The models whose slugs are unique site-wide, and how to reach each one's course.
_SITE_WIDE_MODELS: dict[str, tuple[type[models.Model], str]] = {
    "lesson": (Lesson, "course__slug"),
    "deck": (Deck, "lesson__course__slug"),
    "question": (Question, "lesson__course__slug"),
    "quiz": (Quiz, "lesson__course__slug"),
    "exercise": (PipelineExercise, "lesson__course__slug"),
    "scene": (ExplorerScene, "course__slug"),
}


def content_sources_read(paths: Iterable[Path]) -> list[ContentSource]:
    """Files as given, and every *.yaml/*.yml file under a given folder, in name order."""
    sources: list[ContentSource] = []
    for path in paths:
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix in {".yaml", ".yml"} and p.is_file())
        else:
            files = [path]
        for file in files:
            try:
                text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ContentFilesInvalid([ContentError(str(file), None, "", f"cannot be read: {exc}")]) from exc
            sources.append(ContentSource(str(file), text))
    return sources


def content_sources_validate(*, sources: list[ContentSource]) -> list[tuple[ParsedFile, CourseDoc]]:
    """Every rule, across all files and against the database; raises with all errors found."""
    errors: list[ContentError] = []
    courses: list[tuple[ParsedFile, CourseDoc]] = []
    for source in sources:
        parsed, parse_errors = parse_source(source)
        errors += parse_errors
        if parsed is None or parse_errors:
            continue
        course, shape_errors = course_doc_from_file(parsed)
        errors += shape_errors
        if course is None:
            continue
        file_errors = course_doc_errors(parsed, course)
        errors += file_errors
        if not file_errors:
            courses.append((parsed, course))
    if not errors:
        errors += cross_file_errors(courses)
    if errors:
        raise ContentFilesInvalid(errors)
    return courses


def cross_file_errors(courses: list[tuple[ParsedFile, CourseDoc]]) -> list[ContentError]:
    """Slugs claimed twice across the files, or already owned by another course in the database."""
    errors: list[ContentError] = []
    first_file: dict[tuple[str, str], str] = {}
    for parsed, course in courses:
        key = ("course", course.slug)
        if key in first_file:
            errors.append(parsed.error(("slug",), f"course {course.slug!r} is also defined in {first_file[key]}"))
        first_file.setdefault(key, parsed.name)
    for parsed, course in courses:
        for kind, items in site_wide_slugs(course).items():
            model, course_path = _SITE_WIDE_MODELS[kind]
            slugs = [slug for _, slug in items]
            owners = dict(
                model._default_manager.filter(slug__in=slugs)
                .exclude(**{course_path: course.slug})
                .values_list("slug", course_path)
            )
            for location, slug in items:
                claimed_by = first_file.setdefault((kind, slug), parsed.name)
                if slug in owners:
                    errors.append(
                        parsed.error(location, f"{kind} slug {slug!r} already belongs to course {owners[slug]!r}")
                    )
                elif claimed_by != parsed.name:
                    errors.append(parsed.error(location, f"{kind} slug {slug!r} is also used in {claimed_by}"))
    return errors


def content_sources_load(
    *, sources: list[ContentSource], progress: ProgressCallback | None = None, dry_run: bool = False
) -> LoadReport:
    """Load course files; with dry_run, report what would change and write nothing."""
    courses = content_sources_validate(sources=sources)
    return _courses_write([course for _, course in courses], progress=progress, dry_run=dry_run)


def content_docs_load(
    *, docs: list[CourseDoc], progress: ProgressCallback | None = None, dry_run: bool = False
) -> LoadReport:
    """Load course documents built in code (deck imports) by the rules and the writer that course files go through."""
    errors: list[ContentError] = []
    courses: list[tuple[ParsedFile, CourseDoc]] = []
    for doc in docs:
        # Checked again from plain data, as a file is: a document edited after it was built gets no pass.
        parsed = ParsedFile(f"course {doc.slug}", doc.model_dump(mode="json"))
        course, shape_errors = course_doc_from_file(parsed)
        errors += shape_errors
        if course is None:
            continue
        file_errors = course_doc_errors(parsed, course)
        errors += file_errors
        if not file_errors:
            courses.append((parsed, course))
    if not errors:
        errors += cross_file_errors(courses)
    if errors:
        raise ContentFilesInvalid(errors)
    return _courses_write([course for _, course in courses], progress=progress, dry_run=dry_run)


def _courses_write(courses: list[CourseDoc], *, progress: ProgressCallback | None, dry_run: bool) -> LoadReport:
    total = sum(_row_count(course) for course in courses)
    writer = _ContentWriter(total=total, progress=progress, dry_run=dry_run)
    with transaction.atomic():
        for course in courses:
            writer.write_course(course)
        if progress is not None:
            progress(total, total)
        if dry_run:
            transaction.set_rollback(True)
    return writer.report


def _row_count(course: CourseDoc) -> int:
    count = 1 + len(course.concepts)
    for lesson in course.lessons:
        count += 1 + len(lesson.sections) + len(lesson.questions) + len(lesson.quizzes) + len(lesson.exercises)
        count += sum(1 + len(deck.cards) for deck in lesson.decks)
    return count + sum(1 + len(scene.regions) for scene in course.scenes)


def _chunks(items: list[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(items), CHUNK_SIZE):
        yield items[start : start + CHUNK_SIZE]


class _ContentWriter:
    def __init__(self, *, total: int, progress: ProgressCallback | None, dry_run: bool = False) -> None:
        self.report = LoadReport(dry_run=dry_run)
        self.created: set[tuple[type[models.Model], int]] = set()
        # Every row written or kept, by (model, pk): its path of slugs in the report, e.g. "deck-slug/card-slug".
        self.paths: dict[tuple[type[models.Model], int], str] = {}
        # Rows counted unchanged or renumbered so far: a later change of their cards or parts recounts them as updated.
        self.quiet: dict[tuple[type[models.Model], int], Literal["unchanged", "renumbered"]] = {}
        self.total = total
        self.done = 0
        self.progress = progress

    def _advance(self, rows: int) -> None:
        self.done += rows
        if self.progress is not None:
            self.progress(min(self.done, self.total), self.total)

    def write_course(self, doc: CourseDoc) -> None:
        self.report.courses.append(doc.slug)
        course = self._upsert_one(
            Course,
            slug=doc.slug,
            values={
                "title": doc.title,
                "subject": doc.subject,
                "description": doc.description,
                "archived": doc.archived,
            },
        )
        lessons = self.upsert(
            Lesson,
            parent={"course_id": course.pk},
            rows=[
                {
                    "slug": lesson.slug,
                    "title": lesson.title,
                    "manual": lesson.manual,
                    "subject": lesson.subject,
                    "summary": lesson.summary,
                    "archived": lesson.archived,
                }
                for lesson in doc.lessons
            ],
            site_wide=True,
            removed="archive",
        )
        card_ids: dict[str, int] = {}
        questions: dict[str, Question] = {}
        for lesson_doc in doc.lessons:
            lesson_cards, lesson_questions = self._write_lesson(lessons[lesson_doc.slug], lesson_doc)
            card_ids |= lesson_cards
            questions |= lesson_questions
        # After every lesson: a question may test a card of another lesson's deck.
        for lesson_doc in doc.lessons:
            for question_doc in lesson_doc.questions:
                self._set_related("cards", questions[question_doc.slug], [card_ids[ref] for ref in question_doc.cards])

        concepts = self.upsert(
            Concept,
            parent={"course_id": course.pk},
            rows=[
                {"slug": c.slug, "name": c.name, "definition": c.definition, "archived": c.archived}
                for c in doc.concepts
            ],
            site_wide=False,
            removed="archive",
        )
        for concept_doc in doc.concepts:
            self._set_related("cards", concepts[concept_doc.slug], [card_ids[ref] for ref in concept_doc.cards])
        exercises = PipelineExercise.objects.filter(lesson__course=course).in_bulk(field_name="slug")
        for lesson_doc in doc.lessons:
            for exercise_doc in lesson_doc.exercises:
                practised = [concepts[slug].pk for slug in exercise_doc.concepts]
                self._set_related("concepts", exercises[exercise_doc.slug], practised)
        self.replace(
            ConceptLink,
            scope=Q(source__course_id=course.pk),
            owner=course,
            part="links",
            rows=[
                {"source_id": concepts[link.source].pk, "target_id": concepts[link.target].pk, "kind": link.kind}
                for link in doc.links
            ],
        )

        scenes = self.upsert(
            ExplorerScene,
            parent={"course_id": course.pk},
            rows=[
                {
                    "slug": s.slug,
                    "title": s.title,
                    "instructions": s.instructions,
                    "model_asset": s.model_asset,
                    "archived": s.archived,
                }
                for s in doc.scenes
            ],
            site_wide=True,
            removed="archive",
        )
        for scene_doc in doc.scenes:
            regions = self.upsert(
                ExplorerRegion,
                parent={"scene_id": scenes[scene_doc.slug].pk},
                rows=[
                    {"slug": r.slug, "title": r.title, "description": r.description, "archived": r.archived}
                    for r in scene_doc.regions
                ],
                site_wide=False,
                removed="archive",
            )
            for region_doc in scene_doc.regions:
                self._set_related("cards", regions[region_doc.slug], [card_ids[ref] for ref in region_doc.cards])

    def _write_lesson(self, lesson: Lesson, doc: LessonDoc) -> tuple[dict[str, int], dict[str, Question]]:
        card_ids: dict[str, int] = {}
        decks = self.upsert(
            Deck,
            parent={"lesson_id": lesson.pk},
            rows=[
                {"slug": d.slug, "title": d.title, "description": d.description, "archived": d.archived}
                for d in doc.decks
            ],
            site_wide=True,
            removed="archive",
        )
        for deck_doc in doc.decks:
            cards = self.upsert(
                Card,
                parent={"deck_id": decks[deck_doc.slug].pk},
                rows=[
                    {
                        "slug": c.slug,
                        "term": c.term,
                        "definition": c.definition,
                        "example": c.example,
                        "code": c.code,
                        "format": c.format,
                        "tags": list(c.tags),
                        "anki_guid": c.anki_guid,
                        "archived": c.archived,
                    }
                    for c in deck_doc.cards
                ],
                site_wide=False,
                removed="archive",
            )
            card_ids |= {f"{deck_doc.slug}/{slug}": card.pk for slug, card in cards.items()}

        questions = self.upsert(
            Question,
            parent={"lesson_id": lesson.pk},
            rows=[
                {
                    "slug": q.slug,
                    "kind": q.kind,
                    "prompt": q.prompt,
                    "explanation": q.explanation,
                    "numeric_answer": q.answer,
                    "tolerance": q.tolerance,
                    "archived": q.archived,
                }
                for q in doc.questions
            ],
            site_wide=True,
            removed="archive",
        )
        for question_doc in doc.questions:
            question_id = questions[question_doc.slug].pk
            self.replace(
                Choice,
                scope=Q(question_id=question_id),
                owner=questions[question_doc.slug],
                part="choices",
                rows=[
                    {"question_id": question_id, "key": c.key, "text": c.text, "is_correct": c.correct}
                    for c in question_doc.choices
                ],
            )
            self.replace(
                AcceptedAnswer,
                scope=Q(question_id=question_id),
                owner=questions[question_doc.slug],
                part="accepted answers",
                rows=[{"question_id": question_id, "text": text} for text in question_doc.accepted_answers],
            )

        quizzes = self.upsert(
            Quiz,
            parent={"lesson_id": lesson.pk},
            rows=[
                {"slug": z.slug, "title": z.title, "description": z.description, "archived": z.archived}
                for z in doc.quizzes
            ],
            site_wide=True,
            removed="archive",
        )
        for quiz_doc in doc.quizzes:
            quiz_id = quizzes[quiz_doc.slug].pk
            self.replace(
                QuizQuestion,
                scope=Q(quiz_id=quiz_id),
                owner=quizzes[quiz_doc.slug],
                part="questions",
                rows=[{"quiz_id": quiz_id, "question_id": questions[slug].pk} for slug in quiz_doc.questions],
            )

        self.upsert(
            PipelineExercise,
            parent={"lesson_id": lesson.pk},
            rows=[
                {
                    "slug": e.slug,
                    "title": e.title,
                    "prompt": e.prompt,
                    "entry_point": e.entry_point,
                    "starter_code": e.starter_code,
                    "spec": e.spec,
                    "archived": e.archived,
                }
                for e in doc.exercises
            ],
            site_wide=True,
            removed="archive",
        )

        sections = self.upsert(
            LessonSection,
            parent={"lesson_id": lesson.pk},
            rows=[{"slug": s.slug, "title": s.title} for s in doc.sections],
            site_wide=False,
            removed="delete",
        )
        for section_doc in doc.sections:
            section_id = sections[section_doc.slug].pk
            rows = []
            for block in section_doc.blocks:
                payload = block_payload(block)
                question_slug = getattr(block, "question", None)
                rows.append(
                    {
                        "section_id": section_id,
                        "kind": block.kind,
                        "heading": block.heading,
                        "payload": payload,
                        "question_id": questions[question_slug].pk if question_slug else None,
                    }
                )
            self.replace(
                LessonBlock,
                scope=Q(section_id=section_id),
                owner=sections[section_doc.slug],
                part="blocks",
                rows=rows,
            )
        return card_ids, questions

    def _note(self, model: type[models.Model], obj: Any, path: str) -> str:
        self.paths[(model, obj.pk)] = path
        return path

    def _record(self, model: type[models.Model], obj: Any, action: Action, fields: list[str] | None = None) -> None:
        self.report.record(model, action=action, path=self.paths[(model, obj.pk)], label=item_label(obj), fields=fields)

    def _upsert_one(self, model: type[models.Model], *, slug: str, values: dict[str, Any]) -> Any:
        counts = self.report.for_model(model)
        obj = model._default_manager.filter(slug=slug).first()
        if obj is None:
            obj = model._default_manager.create(slug=slug, **values)
            self.created.add((model, obj.pk))
            self._note(model, obj, slug)
            self._record(model, obj, "created")
        else:
            self._note(model, obj, slug)
            changed = [name for name, value in values.items() if getattr(obj, name) != value]
            if changed:
                for name in changed:
                    setattr(obj, name, values[name])
                obj.save(update_fields=[*changed, "updated_at"])
                self._record(model, obj, "updated", changed)
            else:
                counts.unchanged += 1
                self.quiet[(model, obj.pk)] = "unchanged"
        self._advance(1)
        return obj

    def upsert(
        self,
        model: type[models.Model],
        *,
        parent: dict[str, int],
        rows: list[dict[str, Any]],
        site_wide: bool,
        removed: Literal["archive", "delete"],
    ) -> dict[str, Any]:
        """Make the parent's children exactly `rows`, in order, keyed by slug.

        Children missing from `rows` are archived (moved after the others) or deleted. Rows found
        by slug under another parent of the same course (site-wide slugs) move here.
        """
        counts = self.report.for_model(model)
        slugs = [row["slug"] for row in rows]
        wanted = set(slugs)
        current_filter = Q(**parent) | Q(slug__in=slugs) if site_wide else Q(**parent)
        manager: Any = model._default_manager
        current: dict[str, Any] = {obj.slug: obj for obj in manager.filter(current_filter)}
        path_of = self._child_paths(model, parent=parent, site_wide=site_wide)
        for slug, obj in current.items():
            self._note(model, obj, path_of(slug))
        gone = sorted((obj for slug, obj in current.items() if slug not in wanted), key=lambda o: o.position)
        if removed == "delete" and gone:
            model._default_manager.filter(pk__in=[obj.pk for obj in gone]).delete()
            for obj in gone:
                self._record(model, obj, "deleted")
            gone = []

        targets: list[tuple[Any, dict[str, Any]]] = [
            (current.get(row["slug"]), {**row, **parent, "position": position}) for position, row in enumerate(rows)
        ]
        targets += [(obj, {"archived": True, "position": len(rows) + offset}) for offset, obj in enumerate(gone)]
        in_order = _kept_in_order(targets, parent=parent)

        updates: list[tuple[Any, dict[str, Any]]] = []
        moved: list[int] = []
        unchanged = 0
        for obj, target in targets:
            if obj is None:
                continue
            changed = {name: value for name, value in target.items() if getattr(obj, name) != value}
            if changed:
                updates.append((obj, changed))
                if "position" in changed or any(name in changed for name in parent):
                    moved.append(obj.pk)
                    changed["position"] = target["position"]
            else:
                unchanged += 1
                self.quiet[(model, obj.pk)] = "unchanged"
        counts.unchanged += unchanged
        self._advance(unchanged)
        # Free the positions being rewritten first, so no row collides on its way to a new place.
        if moved:
            positions_park(rows=model._default_manager.filter(pk__in=moved))
        for chunk in _chunks(updates):
            for obj, changed in chunk:
                removed_now = changed.get("archived") is True and not obj.archived and obj.slug not in wanted
                for name, value in changed.items():
                    setattr(obj, name, value)
                obj.save(update_fields=[*changed, "updated_at"])
                if removed_now:
                    self._record(model, obj, "archived")
                    continue
                fields = _changed_fields(changed, parent=parent, kept_in_order=obj.pk in in_order)
                if fields:
                    self._record(model, obj, "updated", fields)
                else:
                    counts.renumbered += 1
                    self.quiet[(model, obj.pk)] = "renumbered"
            self._advance(len(chunk))

        new_objects: list[Any] = [model(**target) for obj, target in targets if obj is None]
        for chunk in _chunks(new_objects):
            model._default_manager.bulk_create(chunk)
            for obj in chunk:
                self.created.add((model, obj.pk))
                self._note(model, obj, path_of(obj.slug))
                self._record(model, obj, "created")
            self._advance(len(chunk))
        by_slug = {obj.slug: obj for obj in current.values()} | {obj.slug: obj for obj in new_objects}
        return {slug: by_slug[slug] for slug in slugs}

    def _child_paths(
        self, model: type[models.Model], *, parent: dict[str, int], site_wide: bool
    ) -> Callable[[str], str]:
        """A site-wide slug names its item alone; any other is prefixed with its parent's path ("deck/card")."""
        if site_wide:
            return lambda slug: slug
        ((column, parent_pk),) = parent.items()
        parent_model: Any = model._meta.get_field(column.removesuffix("_id")).related_model
        prefix = self.paths[(parent_model, parent_pk)]
        return lambda slug: f"{prefix}/{slug}"

    def replace(
        self, model: type[models.Model], *, scope: Q, owner: models.Model, part: str, rows: list[dict[str, Any]]
    ) -> None:
        """Parts without learner history: rewrite them wholesale, but only when they differ.

        The report lists the rewrite as a change of the owner ("question q1 updated: choices"), not row by row.
        """
        counts = self.report.for_model(model)
        desired = [{**row, "position": position} for position, row in enumerate(rows)]
        names = list(desired[0]) if desired else ["position"]
        current = list(model._default_manager.filter(scope).order_by("position").values(*names))
        if current == desired:
            counts.unchanged += len(desired)
            return
        counts.deleted += model._default_manager.filter(scope).delete()[1].get(model._meta.label, 0)
        model._default_manager.bulk_create([model(**row) for row in desired])
        counts.created += len(desired)
        self._owner_changed(owner, part)

    def _set_related(
        self, field: str, obj: Concept | ExplorerRegion | Question | PipelineExercise, ids: list[int]
    ) -> None:
        related = getattr(obj, field)
        if set(related.values_list("pk", flat=True)) != set(ids):
            related.set(ids)
            self._owner_changed(obj, field)

    def _owner_changed(self, owner: models.Model, part: str) -> None:
        key = (type(owner), owner.pk)
        # A new owner's parts are part of its creation.
        if key in self.created:
            return
        quiet = self.quiet.pop(key, None)
        if quiet is not None:
            counts = self.report.for_model(type(owner))
            setattr(counts, quiet, getattr(counts, quiet) - 1)
        self._record(type(owner), owner, "updated", [part])


def _kept_in_order(targets: list[tuple[Any, dict[str, Any]]], *, parent: dict[str, int]) -> set[int]:
    """The rows that keep their order among the parent's rows: the most that can stay while the others move.

    A row inserted or removed before others shifts their positions without moving them; only rows
    outside a longest run of increasing old positions (taken in the new order) really moved.
    """
    staying = [
        obj
        for obj, target in targets
        if obj is not None and "slug" in target and all(getattr(obj, name) == value for name, value in parent.items())
    ]
    return {staying[index].pk for index in _longest_increasing_run([obj.position for obj in staying])}


def _longest_increasing_run(values: list[int]) -> list[int]:
    """Indexes of one longest strictly increasing subsequence of `values` (patience sorting, n log n)."""
    tail_values: list[int] = []
    tail_indexes: list[int] = []
    previous = [-1] * len(values)
    for index, value in enumerate(values):
        place = bisect_left(tail_values, value)
        if place:
            previous[index] = tail_indexes[place - 1]
        if place == len(tail_values):
            tail_values.append(value)
            tail_indexes.append(index)
        else:
            tail_values[place] = value
            tail_indexes[place] = index
    run: list[int] = []
    index = tail_indexes[-1] if tail_indexes else -1
    while index != -1:
        run.append(index)
        index = previous[index]
    return run[::-1]


def _changed_fields(changed: dict[str, Any], *, parent: dict[str, int], kept_in_order: bool) -> list[str]:
    """The authored fields a reader should see as changed: a new parent, and a position only when the row moved."""
    fields = [name.removesuffix("_id") for name in changed if name != "position"]
    if "position" in changed and not kept_in_order and not any(name in changed for name in parent):
        fields.append("position")
    return fields
