"""Django admin for course content: every model, archive instead of delete, and a YAML import page."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import models
from django.db.models import QuerySet
from django.forms.models import BaseModelFormSet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.defaultfilters import filesizeformat
from django.template.response import TemplateResponse
from django.urls import URLPattern, path
from django.utils.text import Truncator

from apps.content.content_files.load import LoadReport, content_sources_load
from apps.content.content_files.source import ContentError, ContentFilesInvalid, ContentSource
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
from apps.content.services import content_archived_set

# The largest course file in decks/ is well under 1 MB; 5 MB leaves room to grow while keeping a
# mistaken upload (a dataset, a model file) from being parsed in the web process.
MAX_UPLOAD_BYTES = 5 * 1024 * 1024
YAML_SUFFIXES = (".yaml", ".yml")
PASTED_SOURCE_NAME = "pasted text"

# Long text fields as short textareas, so tabular inlines stay readable.
COMPACT_TEXT: dict[type[models.Field[Any, Any]], dict[str, Any]] = {
    models.TextField: {"widget": forms.Textarea(attrs={"rows": 2, "cols": 50})}
}


def _excerpt(text: str, words: int = 12) -> str:
    return Truncator(text).words(words)


# --- Shared behaviour --------------------------------------------------------------------------


class PositionChangeListFormSet(BaseModelFormSet):
    """Changelist rows with an editable position, checked against (parent, position) before saving.

    The changelist form holds only the list_editable fields, so Django's own constraint check skips
    the (parent, position) constraint and a taken position would reach the database as an
    IntegrityError. Rows save one by one, so a position is accepted only if no other row holds it
    now: swapping two rows takes two saves, through a free position.
    """

    position_parent = ""

    def clean(self) -> None:
        super().clean()
        if any(self.errors) or not self.position_parent:
            return
        parent_column = f"{self.position_parent}_id"
        assert self.model is not None  # noqa: S101 - a model formset always has its model
        claimed: set[tuple[Any, int]] = set()
        for form in self.forms:
            if "position" not in form.changed_data:
                continue
            parent_id, position = getattr(form.instance, parent_column), form.instance.position
            if (parent_id, position) in claimed:
                form.add_error("position", f"Position {position} is given to two rows with the same parent.")
                continue
            claimed.add((parent_id, position))
            holder = (
                self.model._default_manager.filter(**{parent_column: parent_id, "position": position})
                .exclude(pk=form.instance.pk)
                .first()
            )
            if holder is not None:
                form.add_error("position", f"Position {position} is held by “{holder}”; move that one first.")


class PositionedAdmin(admin.ModelAdmin):
    """Rows ordered by an explicit position that is unique within `position_parent`."""

    position_parent = ""

    def get_changelist_formset(self, request: HttpRequest, **kwargs: Any) -> type[BaseModelFormSet]:
        formset: type[BaseModelFormSet] = super().get_changelist_formset(
            request, formset=PositionChangeListFormSet, **kwargs
        )
        formset.position_parent = self.position_parent  # type: ignore[attr-defined]
        return formset


class ArchivableAdmin(PositionedAdmin):
    """Content learners may have history on: archived and restored, never deleted."""

    actions = ["archive_selected", "restore_selected"]

    def has_delete_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        # Already filtered out by the delete permission; dropped by name too so the rule stays explicit.
        actions.pop("delete_selected", None)
        return actions

    @admin.action(description="Archive selected %(verbose_name_plural)s", permissions=["change"])
    def archive_selected(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        self._set_archived(request, queryset, archived=True)

    @admin.action(description="Restore selected %(verbose_name_plural)s", permissions=["change"])
    def restore_selected(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        self._set_archived(request, queryset, archived=False)

    def _set_archived(self, request: HttpRequest, queryset: QuerySet[Any], *, archived: bool) -> None:
        count = content_archived_set(items=queryset, archived=archived)
        verb = "Archived" if archived else "Restored"
        self.message_user(request, f"{verb} {count} {self.opts.verbose_name_plural}.", messages.SUCCESS)


class ArchivableTabularInline(admin.TabularInline):
    """An inline of archivable rows: editable and addable, but archived rather than deleted."""

    extra = 0
    show_change_link = True
    formfield_overrides = COMPACT_TEXT

    def has_delete_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False


class CompactListInline(ArchivableTabularInline):
    """A summary of rows whose full form lives on their own page; new ones are added there too."""

    def has_add_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        # Their required fields (answer keys, grading spec) do not fit in a row.
        return False


# --- Inlines -----------------------------------------------------------------------------------


class LessonInline(ArchivableTabularInline):
    model = Lesson
    fields = ("position", "slug", "title", "manual", "archived")
    ordering = ("position",)


class LessonSectionInline(admin.TabularInline):
    model = LessonSection
    fields = ("position", "slug", "title")
    ordering = ("position",)
    extra = 0
    show_change_link = True


class LessonBlockInline(admin.StackedInline):
    model = LessonBlock
    fields = (("position", "kind", "question"), "heading", "payload")
    ordering = ("position",)
    autocomplete_fields = ("question",)
    extra = 0


class DeckInline(ArchivableTabularInline):
    model = Deck
    fields = ("position", "slug", "title", "archived")
    ordering = ("position",)


class QuestionInline(CompactListInline):
    model = Question
    fields = ("position", "slug", "kind", "prompt_excerpt", "archived")
    readonly_fields = ("kind", "prompt_excerpt")
    ordering = ("position",)

    @admin.display(description="prompt")
    def prompt_excerpt(self, obj: Question) -> str:
        return _excerpt(obj.prompt)


class QuizInline(CompactListInline):
    model = Quiz
    fields = ("position", "slug", "title", "archived")
    ordering = ("position",)


class QuizQuestionInline(admin.TabularInline):
    """The quiz's questions in order; a row's question must be one of the quiz's lesson's."""

    model = QuizQuestion
    fields = ("position", "question", "question_kind")
    readonly_fields = ("question_kind",)
    ordering = ("position",)
    autocomplete_fields = ("question",)
    extra = 0

    @admin.display(description="kind")
    def question_kind(self, obj: QuizQuestion) -> str:
        return obj.question.get_kind_display() if obj.question_id else ""


class PipelineExerciseInline(CompactListInline):
    model = PipelineExercise
    fields = ("position", "slug", "title", "entry_point", "archived")
    readonly_fields = ("entry_point",)
    ordering = ("position",)


class CardInline(ArchivableTabularInline):
    model = Card
    fields = ("position", "slug", "term", "definition", "archived")
    ordering = ("position",)


class ChoiceInline(admin.TabularInline):
    model = Choice
    fields = ("position", "key", "text", "is_correct")
    ordering = ("position",)
    extra = 0
    formfield_overrides = COMPACT_TEXT


class AcceptedAnswerInline(admin.TabularInline):
    model = AcceptedAnswer
    fields = ("position", "text")
    ordering = ("position",)
    extra = 0


class ConceptLinkInline(admin.TabularInline):
    model = ConceptLink
    fk_name = "source"
    verbose_name = "outgoing link"
    verbose_name_plural = "outgoing links"
    fields = ("position", "kind", "target")
    ordering = ("position",)
    autocomplete_fields = ("target",)
    extra = 0


class ExplorerRegionInline(ArchivableTabularInline):
    model = ExplorerRegion
    fields = ("position", "slug", "title", "description", "cards", "archived")
    ordering = ("position",)
    autocomplete_fields = ("cards",)


# --- YAML import -------------------------------------------------------------------------------


class MultipleFileInput(forms.FileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """A file field that takes any number of files and cleans each one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": ",".join(YAML_SUFFIXES)}))
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        if not data:
            return []
        clean_one = super().clean
        return [clean_one(item, initial) for item in (data if isinstance(data, list | tuple) else [data])]


class ImportYamlForm(forms.Form):
    course_files = MultipleFileField(
        required=False,
        label="Course files",
        help_text=f"One or more .yaml files, UTF-8, at most {filesizeformat(MAX_UPLOAD_BYTES)} each.",
    )
    text = forms.CharField(
        required=False,
        # Stripping would shift the line numbers in error messages away from the pasted text's.
        strip=False,
        label="Or paste YAML",
        widget=forms.Textarea(attrs={"rows": 16, "cols": 100, "spellcheck": "false", "class": "vLargeTextField"}),
        help_text="One course file. Upload large courses as files instead.",
    )
    dry_run = forms.BooleanField(required=False, label="Validate only (write nothing)", label_suffix="")

    def clean_course_files(self) -> list[ContentSource]:
        sources: list[ContentSource] = []
        problems: list[ValidationError] = []
        for upload in self.cleaned_data["course_files"]:
            name = upload.name or "upload"
            if not name.lower().endswith(YAML_SUFFIXES):
                problems.append(ValidationError(f"{name}: only .yaml or .yml files can be imported."))
            elif upload.size is not None and upload.size > MAX_UPLOAD_BYTES:
                problems.append(
                    ValidationError(
                        f"{name} is {filesizeformat(upload.size)}; "
                        f"the limit is {filesizeformat(MAX_UPLOAD_BYTES)} per file."
                    )
                )
            else:
                try:
                    # utf-8-sig: editors on Windows often prepend a byte-order mark to UTF-8 files.
                    text = upload.read().decode("utf-8-sig")
                except UnicodeDecodeError as exc:
                    problems.append(
                        ValidationError(
                            f"{name} is not UTF-8 text (invalid byte at offset {exc.start}); "
                            "save it as UTF-8 and upload it again."
                        )
                    )
                else:
                    sources.append(ContentSource(name, text))
        if problems:
            raise ValidationError(problems)
        return sources

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        sources: list[ContentSource] = list(cleaned.get("course_files") or [])
        text = cleaned.get("text") or ""
        if text.strip():
            sources.append(ContentSource(PASTED_SOURCE_NAME, text))
        if not sources and not self.errors:
            raise ValidationError("Upload at least one .yaml file or paste YAML text.")
        cleaned["sources"] = sources
        return cleaned


# --- Model admins ------------------------------------------------------------------------------


@admin.register(Course)
class CourseAdmin(ArchivableAdmin):
    list_display = ("title", "slug", "subject", "updated_at", "archived")
    list_editable = ("archived",)
    list_filter = ("archived",)
    search_fields = ("slug", "title", "subject", "description")
    ordering = ("title", "id")
    inlines = (LessonInline,)
    change_list_template = "admin/content/course/change_list.html"
    import_template = "admin/content/course/import_yaml.html"

    def get_urls(self) -> list[URLPattern]:
        # Before the default URLs, whose "<object_id>/" pattern would otherwise match "import-yaml/".
        return [
            path(
                "import-yaml/",
                self.admin_site.admin_view(self.import_yaml_view),
                name=f"{self.opts.app_label}_{self.opts.model_name}_import_yaml",
            ),
            *super().get_urls(),
        ]

    def import_yaml_view(self, request: HttpRequest) -> HttpResponse:
        # An import creates and rewrites courses, so it needs both permissions.
        if not (self.has_add_permission(request) and self.has_change_permission(request)):
            raise PermissionDenied
        load_errors: list[ContentError] = []
        report: LoadReport | None = None
        if request.method == "POST":
            form = ImportYamlForm(request.POST, request.FILES)
            if form.is_valid():
                dry_run: bool = form.cleaned_data["dry_run"]
                try:
                    report = content_sources_load(sources=form.cleaned_data["sources"], dry_run=dry_run)
                except ContentFilesInvalid as exc:
                    load_errors = exc.errors
                else:
                    if not dry_run:
                        self._report_import(request, report)
                        return redirect(f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist")
        else:
            form = ImportYamlForm()
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Import YAML course files",
            "form": form,
            "load_errors": load_errors,
            "report": report,
            "media": self.media + form.media,
        }
        return TemplateResponse(request, self.import_template, context)

    def _report_import(self, request: HttpRequest, report: LoadReport) -> None:
        names = ", ".join(report.courses)
        if report.changed:
            messages.success(request, f"Imported {names}.")
            for line in report.lines():
                messages.info(request, line)
            message = f"Imported from YAML: {'; '.join(report.lines())}"
            for course in Course.objects.filter(slug__in=report.courses):
                self.log_change(request, course, message)
        else:
            messages.info(request, f"{names}: already up to date, nothing changed.")


@admin.register(Lesson)
class LessonAdmin(ArchivableAdmin):
    list_display = ("title", "slug", "course", "manual", "position", "archived")
    list_editable = ("position", "archived")
    list_filter = ("archived", "course")
    list_select_related = ("course",)
    search_fields = ("slug", "title", "summary")
    ordering = ("course", "position")
    autocomplete_fields = ("course",)
    inlines = (LessonSectionInline, DeckInline, QuestionInline, QuizInline, PipelineExerciseInline)
    position_parent = "course"


@admin.register(LessonSection)
class LessonSectionAdmin(PositionedAdmin):
    list_display = ("title", "slug", "lesson", "position")
    list_editable = ("position",)
    list_filter = ("lesson__course", "lesson")
    list_select_related = ("lesson",)
    search_fields = ("slug", "title", "lesson__slug")
    ordering = ("lesson", "position")
    autocomplete_fields = ("lesson",)
    inlines = (LessonBlockInline,)
    position_parent = "lesson"


@admin.register(LessonBlock)
class LessonBlockAdmin(PositionedAdmin):
    list_display = ("__str__", "heading", "kind", "section", "position")
    list_editable = ("position",)
    list_filter = ("kind", "section__lesson__course", "section__lesson")
    list_select_related = ("section",)
    search_fields = ("heading", "section__slug", "section__title", "question__slug")
    ordering = ("section", "position")
    autocomplete_fields = ("section", "question")
    position_parent = "section"


@admin.register(Deck)
class DeckAdmin(ArchivableAdmin):
    list_display = ("title", "slug", "lesson", "position", "archived")
    list_editable = ("position", "archived")
    list_filter = ("archived", "lesson__course", "lesson")
    list_select_related = ("lesson",)
    search_fields = ("slug", "title", "description")
    ordering = ("lesson", "position")
    autocomplete_fields = ("lesson",)
    inlines = (CardInline,)
    position_parent = "lesson"


@admin.register(Card)
class CardAdmin(ArchivableAdmin):
    list_display = ("term", "slug", "deck", "definition_excerpt", "position", "archived")
    list_editable = ("position", "archived")
    list_filter = ("archived", "deck__lesson__course", "deck")
    list_select_related = ("deck",)
    search_fields = ("slug", "term", "definition", "deck__slug")
    ordering = ("deck", "position")
    autocomplete_fields = ("deck",)
    position_parent = "deck"

    @admin.display(description="definition")
    def definition_excerpt(self, obj: Card) -> str:
        return _excerpt(obj.definition)


@admin.register(Question)
class QuestionAdmin(ArchivableAdmin):
    list_display = ("slug", "prompt_excerpt", "kind", "lesson", "position", "archived")
    list_editable = ("position", "archived")
    list_filter = ("archived", "kind", "lesson__course", "lesson")
    list_select_related = ("lesson",)
    search_fields = ("slug", "prompt", "explanation")
    ordering = ("lesson", "position")
    autocomplete_fields = ("lesson", "cards")
    inlines = (ChoiceInline, AcceptedAnswerInline)
    position_parent = "lesson"

    @admin.display(description="prompt")
    def prompt_excerpt(self, obj: Question) -> str:
        return _excerpt(obj.prompt)


@admin.register(Choice)
class ChoiceAdmin(PositionedAdmin):
    list_display = ("text", "key", "question", "is_correct", "position")
    list_filter = ("is_correct", "question__kind", "question__lesson__course")
    list_select_related = ("question",)
    search_fields = ("key", "text", "question__slug")
    ordering = ("question", "position")
    autocomplete_fields = ("question",)
    position_parent = "question"


@admin.register(AcceptedAnswer)
class AcceptedAnswerAdmin(PositionedAdmin):
    list_display = ("text", "question", "position")
    list_filter = ("question__lesson__course",)
    list_select_related = ("question",)
    search_fields = ("text", "question__slug")
    ordering = ("question", "position")
    autocomplete_fields = ("question",)
    position_parent = "question"


@admin.register(Quiz)
class QuizAdmin(ArchivableAdmin):
    list_display = ("title", "slug", "lesson", "question_count", "position", "archived")
    list_editable = ("position", "archived")
    list_filter = ("archived", "lesson__course", "lesson")
    list_select_related = ("lesson",)
    search_fields = ("slug", "title", "description")
    ordering = ("lesson", "position")
    autocomplete_fields = ("lesson",)
    inlines = (QuizQuestionInline,)
    position_parent = "lesson"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Quiz]:
        return super().get_queryset(request).annotate(item_count=models.Count("items"))

    @admin.display(description="questions", ordering="item_count")
    def question_count(self, obj: Quiz) -> int:
        return int(getattr(obj, "item_count", 0))


@admin.register(QuizQuestion)
class QuizQuestionAdmin(PositionedAdmin):
    list_display = ("__str__", "quiz", "question", "position")
    list_editable = ("position",)
    list_filter = ("quiz__lesson__course", "quiz")
    list_select_related = ("quiz", "question")
    search_fields = ("quiz__slug", "question__slug")
    ordering = ("quiz", "position")
    autocomplete_fields = ("quiz", "question")
    position_parent = "quiz"


@admin.register(PipelineExercise)
class PipelineExerciseAdmin(ArchivableAdmin):
    list_display = ("title", "slug", "lesson", "entry_point", "position", "archived")
    list_editable = ("position", "archived")
    list_filter = ("archived", "lesson__course", "lesson")
    list_select_related = ("lesson",)
    search_fields = ("slug", "title", "prompt")
    ordering = ("lesson", "position")
    autocomplete_fields = ("lesson",)
    position_parent = "lesson"


@admin.register(Concept)
class ConceptAdmin(ArchivableAdmin):
    list_display = ("name", "slug", "course", "position", "archived")
    list_editable = ("position", "archived")
    list_filter = ("archived", "course")
    list_select_related = ("course",)
    search_fields = ("slug", "name", "definition")
    ordering = ("course", "position")
    autocomplete_fields = ("course", "cards")
    inlines = (ConceptLinkInline,)
    position_parent = "course"


@admin.register(ConceptLink)
class ConceptLinkAdmin(admin.ModelAdmin):
    list_display = ("source", "kind", "target", "position")
    list_editable = ("position",)
    list_filter = ("kind", "source__course")
    list_select_related = ("source", "target")
    search_fields = ("source__slug", "source__name", "target__slug", "target__name")
    ordering = ("source", "position")
    autocomplete_fields = ("source", "target")


@admin.register(ExplorerScene)
class ExplorerSceneAdmin(ArchivableAdmin):
    list_display = ("title", "slug", "course", "model_asset", "position", "archived")
    list_editable = ("position", "archived")
    list_filter = ("archived", "course")
    list_select_related = ("course",)
    search_fields = ("slug", "title", "instructions")
    ordering = ("course", "position")
    autocomplete_fields = ("course",)
    inlines = (ExplorerRegionInline,)
    position_parent = "course"


@admin.register(ExplorerRegion)
class ExplorerRegionAdmin(ArchivableAdmin):
    list_display = ("title", "slug", "scene", "position", "archived")
    list_editable = ("position", "archived")
    list_filter = ("archived", "scene__course", "scene")
    list_select_related = ("scene",)
    search_fields = ("slug", "title", "description")
    ordering = ("scene", "position")
    autocomplete_fields = ("scene", "cards")
    position_parent = "scene"
