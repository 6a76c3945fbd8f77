"""Django admin for course content: every model, archive instead of delete, and a YAML import page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from adminsortable2.admin import (
    CustomInlineFormSet,
    SortableAdminBase,
    SortableAdminMixin,
    SortableStackedInline,
    SortableTabularInline,
)
from django import forms
from django.contrib import admin, messages
from django.contrib.admin.options import InlineModelAdmin
from django.contrib.admin.utils import model_ngettext
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import models, transaction
from django.db.models import Max, QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.template.defaultfilters import filesizeformat
from django.template.response import TemplateResponse
from django.urls import URLPattern, path
from django.utils.html import format_html
from django.utils.text import Truncator

from apps.common.errors import DomainError, error_response
from apps.content import admin_views, previews
from apps.content.admin_forms import CardAdminForm, CardConceptsFormSetMixin, LessonBlockAdminForm, ReadableJSONField
from apps.content.admin_rules import CourseRulesAdmin
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
from apps.content.services import (
    content_archived_set,
    positioned_delete,
    positioned_save,
    positions_permute,
)

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

POSITION = "position"
ADMIN_CSS = "admin/content/admin.css"
SORTABLE_ROWS_JS = "admin/content/sortable_rows.js"


class ArchivedStatusFilter(admin.SimpleListFilter):
    """Live rows unless asked otherwise: archived ones are hidden from the default list, not from the actions.

    The actions run on the list as filtered, so "Archived" and "All" keep archived rows restorable.
    """

    title = "status"
    parameter_name = "status"
    LIVE, ARCHIVED, ALL = "live", "archived", "all"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [(self.LIVE, "Live"), (self.ARCHIVED, "Archived"), (self.ALL, "All")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == self.ALL:
            return queryset
        return queryset.filter(archived=self.value() == self.ARCHIVED)

    def choices(self, changelist: Any) -> Iterator[Any]:
        # Django's own "All" choice stands for "no parameter", which here means Live.
        counts = self.get_facet_queryset(changelist) if changelist.add_facets else None
        chosen = self.value() if self.value() in (self.ARCHIVED, self.ALL) else self.LIVE
        for index, (lookup, title) in enumerate(self.lookup_choices):
            if counts is not None:
                title = f"{title} ({counts.get(f'{index}__c', '-')})"
            yield {
                "selected": chosen == lookup,
                "query_string": changelist.get_query_string(remove=[self.parameter_name])
                if lookup == self.LIVE
                else changelist.get_query_string({self.parameter_name: lookup}),
                "display": title,
            }


def archived_marker_html(obj: models.Model | None) -> str:
    """An "Archived" badge on archived rows and nothing on live ones; admin.css greys the row around it."""
    if obj is None or not getattr(obj, "archived", False):
        return ""
    return format_html('<span class="archived-marker">{}</span>', "Archived")


class PositionsFromOrderForm(forms.ModelForm):
    """An inline row whose position is its place in the dragged order, not a value held against stored rows.

    The formset renumbers every row when it saves, so the (parent, position) constraint is left to
    that step: checked here, a swap would be refused because the other row still holds the place.
    """

    def _get_validation_exclusions(self) -> set[str]:
        # The one place Django asks which fields to leave out of model and constraint checks.
        exclusions: set[str] = super()._get_validation_exclusions()  # type: ignore[misc]
        exclusions.add(POSITION)
        return exclusions


class PositionedInlineFormSet(CustomInlineFormSet):
    """Inline rows saved in the order they were dragged to, renumbered 0..n-1 in the same transaction.

    The drag-and-drop script writes each row's place into its hidden position input; a row never
    dragged keeps its stored position, and a new row without a place goes last. Rows are first saved
    in their stored places (new ones after the last), then renumbered together, so a swap, a move or
    an insertion takes one save and never meets the unique (parent, position) constraint halfway.

    `position_scope` is the lookup of the rows that share one run of positions: the parent, or further
    up for rows numbered across it (a course numbers its concepts' links together).
    """

    position_scope = ""

    def save(self, commit: bool = True) -> list[Any]:
        if not commit:
            return super().save(commit=False)
        if not self.has_changed():
            # Nothing edited, added or dragged: renumbering would rewrite rows numbered another way (a course's links).
            self.new_objects: list[Any] = []
            self.changed_objects: list[tuple[Any, list[str]]] = []
            self.deleted_objects: list[Any] = []
            return []
        with transaction.atomic():
            in_order = self._forms_in_dropped_order()
            for form in self.initial_forms:
                if form.instance.pk is not None and POSITION in form.initial:
                    setattr(form.instance, POSITION, form.initial[POSITION])
            saved: list[Any] = super().save(commit=True)
            positions_permute(
                model=self.model,
                parent_field=self.position_scope or self.fk.name,
                parent_id=self._scope_id(),
                ordered_ids=[form.instance.pk for form in in_order if form.instance.pk is not None],
            )
        return saved

    def _scope_id(self) -> Any:
        # The scope's path runs through the parent: "source__course" is the concept's course.
        holder: Any = self.instance
        *hops, last = (self.position_scope or self.fk.name).split("__")[1:] or [""]
        for hop in hops:
            holder = getattr(holder, hop)
        return getattr(holder, f"{last}_id") if last else holder.pk

    def save_new(self, form: forms.ModelForm, commit: bool = True) -> Any:
        # Parked after the last row; positions_permute then moves it to where it was dropped.
        scope = {self.position_scope or self.fk.name: self._scope_id()}
        last = self.model._default_manager.filter(**scope).aggregate(last=Max(POSITION))
        setattr(form.instance, POSITION, (last["last"] + 1) if last["last"] is not None else 0)
        # The library's save_new would number a dropped row by its place, which another row may still hold.
        return BaseInlineFormSet.save_new(self, form, commit)

    def _forms_in_dropped_order(self) -> list[forms.ModelForm]:
        kept = [
            (index, form)
            for index, form in enumerate(self.forms)
            if not (self.can_delete and self._should_delete_form(form))
        ]

        def place(item: tuple[int, forms.ModelForm]) -> tuple[bool, int, int]:
            index, form = item
            dropped = getattr(form, "cleaned_data", {}).get(POSITION)
            return (dropped is None, dropped or 0, index)

        return [form for _, form in sorted(kept, key=place)]


class PositionedInlineMixin(InlineModelAdmin):
    """Inline rows reordered by drag and drop (django-admin-sortable2) and renumbered densely on save."""

    formset = PositionedInlineFormSet
    ordering = (POSITION,)
    # See PositionedInlineFormSet; empty for the parent itself.
    position_scope = ""

    def get_formset(self, request: HttpRequest, obj: models.Model | None = None, **kwargs: Any) -> Any:
        # Wrapping whatever form the inline has, so its own validation and fields stay as they are.
        form = type(f"Positioned{self.form.__name__}", (PositionsFromOrderForm, self.form), {})
        formset = super().get_formset(request, obj, **{"form": form, **kwargs})
        formset.position_scope = self.position_scope  # type: ignore[attr-defined]  # a PositionedInlineFormSet
        return formset


class PositionedTabularInline(PositionedInlineMixin, SortableTabularInline):
    extra = 0


class PositionedStackedInline(PositionedInlineMixin, SortableStackedInline):
    extra = 0


class ContentAdmin(SortableAdminBase, admin.ModelAdmin):
    """Every content page: the admin's stylesheet and script, and room for drag-and-drop inlines."""

    class Media:
        css = {"all": (ADMIN_CSS,)}
        js = (SORTABLE_ROWS_JS,)


class PositionedAdmin(SortableAdminMixin, ContentAdmin):
    """Rows ordered by a position that is unique within `position_parent`, reordered by drag and drop.

    The list can be dragged once it is filtered to one parent, where it is ordered by position alone;
    a drag sends the dragged rows' new order, which they take among the places they held (rows hidden
    by the list's filters keep theirs). A row added on its own page, or moved to another parent there,
    goes after that parent's last row.
    """

    position_parent = ""
    ordering = (POSITION,)

    @property
    def parent_filter_key(self) -> str:
        # The query parameter of the parent's list filter (RelatedFieldListFilter: <field>__<pk>__exact).
        return f"{self.position_parent}__id__exact"

    def get_ordering(self, request: HttpRequest) -> tuple[str, ...]:
        if self.parent_filter_key in request.GET:
            return (POSITION,)
        return (self.position_parent, POSITION)

    def get_list_display(self, request: HttpRequest) -> list[Any]:
        # The drag handle first, where list users look for it.
        columns = [column for column in super().get_list_display(request) if column != "_reorder_"]
        return ["_reorder_", *columns]

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        # Skips the library's "move to page" actions: they renumber across parents. Reorder by dragging.
        return super(SortableAdminMixin, self).get_actions(request)

    def save_model(self, request: HttpRequest, obj: Any, form: forms.ModelForm, change: bool) -> None:
        positioned_save(obj=obj, parent_field=self.position_parent)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        positioned_delete(rows=type(obj)._default_manager.filter(pk=obj.pk), parent_field=self.position_parent)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        positioned_delete(rows=queryset, parent_field=self.position_parent)

    def update_order(self, request: HttpRequest) -> HttpResponse:
        """The list's drag-and-drop endpoint: {"updatedItems": [[id, order], ...]} for the rows that moved."""
        if request.method != "POST":
            return error_response(405, "method_not_allowed", "Send the new order with POST.")
        if not self.has_change_permission(request):
            return error_response(403, "permission_denied", f"You may not reorder {self.opts.verbose_name_plural}.")
        try:
            items = json.loads(request.body)["updatedItems"]
            ordered_ids = [pk for pk, _ in sorted(items, key=lambda item: int(item[1]))]
        except (ValueError, KeyError, TypeError, IndexError):
            return error_response(400, "malformed_json", 'Expected {"updatedItems": [[id, order], ...]}.')
        try:
            moved = positions_permute(model=self.model, parent_field=self.position_parent, ordered_ids=ordered_ids)
        except DomainError as exc:
            return error_response(exc.status_code, exc.code, exc.message)
        return JsonResponse({"moved": moved})


class ArchivableAdmin(ContentAdmin):
    """Content learners may have history on: archived and restored, never deleted.

    Archived rows are marked and greyed, and the list shows live rows unless its status filter says
    otherwise.
    """

    actions = ["archive_selected", "restore_selected"]

    def get_list_display(self, request: HttpRequest) -> list[Any]:
        columns = list(super().get_list_display(request))
        # Just after the linked first column, where the eye lands on a row.
        return [*columns[:1], "archived_marker", *columns[1:]]

    @admin.display(description="status", ordering="archived", empty_value="")
    def archived_marker(self, obj: models.Model) -> str:
        return archived_marker_html(obj)

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
        self.message_user(request, f"{verb} {count} {model_ngettext(self.opts, count)}.", messages.SUCCESS)


class PositionedArchivableAdmin(PositionedAdmin, ArchivableAdmin):
    """Archivable content in a parent's order."""


class ArchivableTabularInline(PositionedTabularInline):
    """An inline of archivable rows: editable and addable, but archived rather than deleted."""

    show_change_link = True
    formfield_overrides = COMPACT_TEXT

    def get_fields(self, request: HttpRequest, obj: models.Model | None = None) -> list[Any]:
        fields = [field for field in super().get_fields(request, obj) if field != "archived_marker"]
        at = fields.index("archived") if "archived" in fields else len(fields)
        return [*fields[:at], "archived_marker", *fields[at:]]

    def get_readonly_fields(self, request: HttpRequest, obj: models.Model | None = None) -> list[Any]:
        return [*super().get_readonly_fields(request, obj), "archived_marker"]

    @admin.display(description="status", empty_value="")
    def archived_marker(self, obj: models.Model) -> str:
        return archived_marker_html(obj)

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


class LessonSectionInline(PositionedTabularInline):
    model = LessonSection
    fields = ("position", "slug", "title")
    ordering = ("position",)
    extra = 0
    show_change_link = True


class LessonBlockInline(PositionedStackedInline):
    model = LessonBlock
    form = LessonBlockAdminForm
    # No "position" here: the drag-and-drop inline adds it, hidden, and a second copy would shadow the dragged one.
    fields = (("kind", "question"), "heading", "payload")
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


class QuizQuestionInline(PositionedTabularInline):
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


class CardInlineFormSet(CardConceptsFormSetMixin, PositionedInlineFormSet):
    pass


class CardInline(ArchivableTabularInline):
    model = Card
    form = CardAdminForm
    formset = CardInlineFormSet
    fields = ("position", "slug", "term", "definition", "concepts", "archived")
    ordering = ("position",)


class ChoiceInline(PositionedTabularInline):
    model = Choice
    fields = ("position", "key", "text", "is_correct")
    ordering = ("position",)
    extra = 0
    formfield_overrides = COMPACT_TEXT


class AcceptedAnswerInline(PositionedTabularInline):
    model = AcceptedAnswer
    fields = ("position", "text")
    ordering = ("position",)
    extra = 0


class ConceptLinkInline(PositionedTabularInline):
    model = ConceptLink
    fk_name = "source"
    verbose_name = "outgoing link"
    verbose_name_plural = "outgoing links"
    fields = ("position", "kind", "target")
    ordering = ("position",)
    autocomplete_fields = ("target",)
    extra = 0
    # The course file lists a course's links in one run, so their positions count across the course.
    position_scope = "source__course"


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
class CourseAdmin(CourseRulesAdmin, ArchivableAdmin):
    list_display = ("title", "slug", "subject", "updated_at", "archived")
    list_editable = ("archived",)
    list_filter = (ArchivedStatusFilter,)
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
            path(
                "import-yaml/report/<str:token>/",
                self.admin_site.admin_view(self.import_report_view),
                name=f"{self.opts.app_label}_{self.opts.model_name}_import_report",
            ),
            path(
                "course-file-format/",
                self.admin_site.admin_view(self.course_file_format_view),
                name=f"{self.opts.app_label}_{self.opts.model_name}_file_format",
            ),
            *super().get_urls(),
        ]

    def import_report_view(self, request: HttpRequest, token: str) -> HttpResponse:
        return admin_views.import_report_view(self, request, token)

    def course_file_format_view(self, request: HttpRequest) -> HttpResponse:
        return admin_views.course_file_format_view(self, request)

    def import_yaml_view(self, request: HttpRequest) -> HttpResponse:
        if not admin_views.import_permitted(self, request):
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
                        self._log_import(request, report)
                        # Redirect, so that reloading the report page shows it again instead of importing again.
                        token = admin_views.import_report_keep(request=request, report=report)
                        return redirect(f"admin:{self.opts.app_label}_{self.opts.model_name}_import_report", token)
        else:
            form = ImportYamlForm()
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Import YAML course files",
            "form": form,
            "load_errors": load_errors,
            **admin_views.report_context(report),
            "media": self.media + form.media,
        }
        return TemplateResponse(request, self.import_template, context)

    def _log_import(self, request: HttpRequest, report: LoadReport) -> None:
        if report.changed:
            changes = "; ".join(f"{group.name}: {group.summary}" for group in report.groups(limit=0))
            for course in Course.objects.filter(slug__in=report.courses):
                self.log_change(request, course, f"Imported from YAML: {changes}")


@admin.register(Lesson)
class LessonAdmin(CourseRulesAdmin, PositionedArchivableAdmin):
    list_display = ("title", "slug", "course", "manual", "position", "archived")
    list_editable = ("archived",)
    list_filter = (ArchivedStatusFilter, "course")
    list_select_related = ("course",)
    search_fields = ("slug", "title", "summary")
    autocomplete_fields = ("course",)
    inlines = (LessonSectionInline, DeckInline, QuestionInline, QuizInline, PipelineExerciseInline)
    position_parent = "course"


@admin.register(LessonSection)
class LessonSectionAdmin(CourseRulesAdmin, PositionedAdmin):
    list_display = ("title", "slug", "lesson", "position")
    list_filter = ("lesson__course", "lesson")
    list_select_related = ("lesson",)
    search_fields = ("slug", "title", "lesson__slug")
    autocomplete_fields = ("lesson",)
    inlines = (LessonBlockInline,)
    position_parent = "lesson"


@admin.register(LessonBlock)
class LessonBlockAdmin(CourseRulesAdmin, PositionedAdmin):
    form = LessonBlockAdminForm
    list_display = ("__str__", "heading", "kind", "section", "position")
    list_filter = ("kind", "section__lesson__course", "section__lesson")
    list_select_related = ("section",)
    search_fields = ("heading", "section__slug", "section__title", "question__slug")
    autocomplete_fields = ("section", "question")
    position_parent = "section"


@admin.register(Deck)
class DeckAdmin(CourseRulesAdmin, PositionedArchivableAdmin):
    # Importing and exporting Anki packages are added by apps.interchange.admin.
    list_display = ("title", "slug", "lesson", "position", "archived")
    list_editable = ("archived",)
    list_filter = (ArchivedStatusFilter, "lesson__course", "lesson")
    list_select_related = ("lesson",)
    search_fields = ("slug", "title", "description")
    autocomplete_fields = ("lesson",)
    inlines = (CardInline,)
    position_parent = "lesson"


@admin.register(Card)
class CardAdmin(CourseRulesAdmin, previews.CardPreviewAdmin, PositionedArchivableAdmin):
    form = CardAdminForm
    list_display = ("term", "deck", "definition_excerpt", "position", "archived")
    list_editable = ("archived",)
    list_filter = (ArchivedStatusFilter, "deck__lesson__course", "deck")
    list_select_related = ("deck",)
    search_fields = ("slug", "term", "definition", "deck__slug")
    autocomplete_fields = ("deck",)
    position_parent = "deck"

    @admin.display(description="definition")
    def definition_excerpt(self, obj: Card) -> str:
        return _excerpt(obj.definition)


@admin.register(Question)
class QuestionAdmin(CourseRulesAdmin, PositionedArchivableAdmin):
    # Its preview, which grades a tried answer as a quiz does, is added by apps.quizzes.admin.
    list_display = ("slug", "prompt_excerpt", "kind", "lesson", "position", "archived")
    list_editable = ("archived",)
    list_filter = (ArchivedStatusFilter, "kind", "lesson__course", "lesson")
    list_select_related = ("lesson",)
    search_fields = ("slug", "prompt", "explanation")
    autocomplete_fields = ("lesson", "cards")
    inlines = (ChoiceInline, AcceptedAnswerInline)
    position_parent = "lesson"

    @admin.display(description="prompt")
    def prompt_excerpt(self, obj: Question) -> str:
        return _excerpt(obj.prompt)


@admin.register(Choice)
class ChoiceAdmin(CourseRulesAdmin, PositionedAdmin):
    list_display = ("text", "key", "question", "is_correct", "position")
    list_filter = ("is_correct", "question__kind", "question__lesson__course")
    list_select_related = ("question",)
    search_fields = ("key", "text", "question__slug")
    autocomplete_fields = ("question",)
    position_parent = "question"


@admin.register(AcceptedAnswer)
class AcceptedAnswerAdmin(CourseRulesAdmin, PositionedAdmin):
    list_display = ("text", "question", "position")
    list_filter = ("question__lesson__course",)
    list_select_related = ("question",)
    search_fields = ("text", "question__slug")
    autocomplete_fields = ("question",)
    position_parent = "question"


@admin.register(Quiz)
class QuizAdmin(CourseRulesAdmin, PositionedArchivableAdmin):
    list_display = ("title", "slug", "lesson", "question_count", "position", "archived")
    list_editable = ("archived",)
    list_filter = (ArchivedStatusFilter, "lesson__course", "lesson")
    list_select_related = ("lesson",)
    search_fields = ("slug", "title", "description")
    autocomplete_fields = ("lesson",)
    inlines = (QuizQuestionInline,)
    position_parent = "lesson"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Quiz]:
        return super().get_queryset(request).annotate(item_count=models.Count("items"))

    @admin.display(description="questions", ordering="item_count")
    def question_count(self, obj: Quiz) -> int:
        return int(getattr(obj, "item_count", 0))


@admin.register(QuizQuestion)
class QuizQuestionAdmin(CourseRulesAdmin, PositionedAdmin):
    list_display = ("__str__", "quiz", "question", "position")
    list_filter = ("quiz__lesson__course", "quiz")
    list_select_related = ("quiz", "question")
    search_fields = ("quiz__slug", "question__slug")
    autocomplete_fields = ("quiz", "question")
    position_parent = "quiz"


@admin.register(PipelineExercise)
class PipelineExerciseAdmin(CourseRulesAdmin, PositionedArchivableAdmin):
    formfield_overrides = {models.JSONField: {"form_class": ReadableJSONField}}
    list_display = ("title", "slug", "lesson", "entry_point", "position", "archived")
    list_editable = ("archived",)
    list_filter = (ArchivedStatusFilter, "lesson__course", "lesson")
    list_select_related = ("lesson",)
    search_fields = ("slug", "title", "prompt")
    autocomplete_fields = ("lesson",)
    position_parent = "lesson"


@admin.register(Concept)
class ConceptAdmin(CourseRulesAdmin, PositionedArchivableAdmin):
    list_display = ("name", "slug", "course", "position", "archived")
    list_editable = ("archived",)
    list_filter = (ArchivedStatusFilter, "course")
    list_select_related = ("course",)
    search_fields = ("slug", "name", "definition")
    autocomplete_fields = ("course", "cards")
    inlines = (ConceptLinkInline,)
    position_parent = "course"


@admin.register(ConceptLink)
class ConceptLinkAdmin(CourseRulesAdmin, PositionedAdmin):
    list_display = ("source", "kind", "target", "position")
    list_filter = ("kind", "source__course")
    list_select_related = ("source", "target")
    search_fields = ("source__slug", "source__name", "target__slug", "target__name")
    autocomplete_fields = ("source", "target")
    position_parent = "source__course"


@admin.register(ExplorerScene)
class ExplorerSceneAdmin(CourseRulesAdmin, PositionedArchivableAdmin):
    list_display = ("title", "slug", "course", "model_asset", "position", "archived")
    list_editable = ("archived",)
    list_filter = (ArchivedStatusFilter, "course")
    list_select_related = ("course",)
    search_fields = ("slug", "title", "instructions")
    autocomplete_fields = ("course",)
    inlines = (ExplorerRegionInline,)
    position_parent = "course"


@admin.register(ExplorerRegion)
class ExplorerRegionAdmin(CourseRulesAdmin, PositionedArchivableAdmin):
    list_display = ("title", "slug", "scene", "position", "archived")
    list_editable = ("archived",)
    list_filter = (ArchivedStatusFilter, "scene__course", "scene")
    list_select_related = ("scene",)
    search_fields = ("slug", "title", "description")
    autocomplete_fields = ("scene", "cards")
    position_parent = "scene"
