"""Admin writes keep the course-file rules: each runs the loader's checks before it commits, and saves only edits."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db import models, router, transaction
from django.db.models import QuerySet
from django.forms.formsets import BaseFormSet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from apps.content.content_files.check import CourseRuleError, course_ids_of, course_rules_check
from apps.content.models import Course

# Request attributes that carry one admin write through Django's view: what it touched, then what broke.
_WRITE_ATTRIBUTE = "content_admin_write"
_ERRORS_ATTRIBUTE = "content_rule_errors"

# Form errors by form prefix (None: the page's main form), each a (field or None, message).
FormErrors = dict[str | None, list[tuple[str | None, str]]]


@dataclass
class _AdminWrite:
    """What one admin request wrote: the courses to check, and which form on the page holds each row."""

    course_ids: set[int] = field(default_factory=set)
    form_prefixes: dict[tuple[type[models.Model], Any], str | None] = field(default_factory=dict)
    messages: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)

    def form_errors(self, errors: list[CourseRuleError]) -> FormErrors:
        placed: FormErrors = {}
        for error in errors:
            key = (error.model, error.pk)
            if key in self.form_prefixes:
                placed.setdefault(self.form_prefixes[key], []).append((error.field, error.message))
            else:
                placed.setdefault(None, []).append((None, error.message))
        return placed


class _CourseRulesBroken(Exception):
    def __init__(self, errors: list[CourseRuleError], write: _AdminWrite) -> None:
        super().__init__("; ".join(error.message for error in errors))
        self.errors = errors
        self.write = write


def _with_rule_errors(form_class: type[forms.BaseForm], errors: FormErrors) -> type[forms.BaseForm]:
    """The form class, adding the course-rule errors aimed at each form as it is cleaned."""

    class RuleErrorsForm(form_class):  # type: ignore[valid-type,misc]
        def clean(self) -> Any:
            cleaned = super().clean()
            for field_name, message in errors.get(self.prefix, []):
                self.add_error(field_name if field_name in self.fields else None, message)
            return cleaned

    RuleErrorsForm.__name__ = RuleErrorsForm.__qualname__ = form_class.__name__
    return RuleErrorsForm


class CourseRulesAdmin(admin.ModelAdmin):
    """A content admin whose every write is checked by the loader's rules in its transaction, and rolled back on
    errors; a form or inline row left unchanged is not saved and not logged."""

    # --- Views: each write runs inside one checked transaction ------------------------------------

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        view = super().changeform_view
        if request.method != "POST":
            return view(request, object_id, form_url, extra_context)
        try:
            return self._checked(request, lambda: view(request, object_id, form_url, extra_context))
        except _CourseRulesBroken as broken:
            # Shown again with the bound data kept; the forms' clean() adds the errors, so nothing is saved.
            setattr(request, _ERRORS_ATTRIBUTE, broken.write.form_errors(broken.errors))
            try:
                return view(request, object_id, form_url, extra_context)
            finally:
                delattr(request, _ERRORS_ATTRIBUTE)

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        # list_editable saves and actions (archive, restore, delete) both arrive as a POST to the changelist.
        return self._checked_or_banner(
            request, lambda: super(CourseRulesAdmin, self).changelist_view(request, extra_context)
        )

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        return self._checked_or_banner(
            request, lambda: super(CourseRulesAdmin, self).delete_view(request, object_id, extra_context)
        )

    def _checked_or_banner(self, request: HttpRequest, view: Callable[[], HttpResponse]) -> HttpResponse:
        if request.method != "POST":
            return view()
        try:
            return self._checked(request, view)
        except _CourseRulesBroken as broken:
            for error in broken.errors:
                self.message_user(request, f"Nothing was saved: {error.message}", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def _checked(self, request: HttpRequest, view: Callable[[], HttpResponse]) -> HttpResponse:
        write = _AdminWrite()
        setattr(request, _WRITE_ATTRIBUTE, write)
        try:
            with transaction.atomic(using=router.db_for_write(self.model)):
                if request.POST.get("action"):
                    # An action (archive, restore, delete) writes the rows it is given: their courses are checked.
                    selected = self.get_queryset(request)
                    if request.POST.get("select_across") != "1":
                        selected = selected.filter(pk__in=request.POST.getlist(helpers.ACTION_CHECKBOX_NAME))
                    self.content_written(request, selected)
                response = view()
                errors = [
                    error
                    for course in Course.objects.filter(pk__in=write.course_ids).order_by("pk")
                    for error in course_rules_check(course=course)
                ]
                if errors:
                    raise _CourseRulesBroken(errors, write)
        finally:
            delattr(request, _WRITE_ATTRIBUTE)
        for args, kwargs in write.messages:
            super().message_user(request, *args, **kwargs)
        return response

    def message_user(self, request: HttpRequest, *args: Any, **kwargs: Any) -> None:
        write: _AdminWrite | None = getattr(request, _WRITE_ATTRIBUTE, None)
        if write is None:
            super().message_user(request, *args, **kwargs)
        else:
            # Held back until the write commits: a rolled-back save must not report success.
            write.messages.append((args, kwargs))

    def content_written(self, request: HttpRequest, rows: QuerySet[Any]) -> None:
        """Note that these rows are about to change (or just did), so their courses are checked before commit."""
        write: _AdminWrite | None = getattr(request, _WRITE_ATTRIBUTE, None)
        if write is not None:
            write.course_ids |= course_ids_of(rows=rows)

    # --- Saving: only what changed ------------------------------------------------------------------

    def save_model(self, request: HttpRequest, obj: Any, form: forms.ModelForm, change: bool) -> None:
        if change and not form.has_changed():
            return
        if change:
            # Before the save too: a row moved to another course leaves the old one to check.
            self.content_written(request, type(obj)._default_manager.filter(pk=obj.pk))
        super().save_model(request, obj, form, change)
        self.content_written(request, type(obj)._default_manager.filter(pk=obj.pk))

    def save_related(
        self, request: HttpRequest, form: forms.ModelForm, formsets: list[BaseFormSet], change: bool
    ) -> None:
        super().save_related(request, form, formsets, change)
        write: _AdminWrite | None = getattr(request, _WRITE_ATTRIBUTE, None)
        if write is None:
            return
        touched = form.has_changed()
        write.form_prefixes[(type(form.instance), form.instance.pk)] = form.prefix
        for formset in formsets:
            touched = touched or bool(
                getattr(formset, "new_objects", None)
                or getattr(formset, "changed_objects", None)
                or getattr(formset, "deleted_objects", None)
            )
            for inline_form in formset.forms:
                if inline_form.instance.pk is not None:
                    write.form_prefixes[(type(inline_form.instance), inline_form.instance.pk)] = inline_form.prefix
        if touched:
            self.content_written(request, type(form.instance)._default_manager.filter(pk=form.instance.pk))

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        self.content_written(request, type(obj)._default_manager.filter(pk=obj.pk))
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        self.content_written(request, queryset)
        super().delete_queryset(request, queryset)

    def log_change(self, request: HttpRequest, obj: Any, message: Any) -> Any:
        # Django logs "No fields changed." for an untouched save; nothing was saved, so nothing is logged.
        if not message:
            return None
        return super().log_change(request, obj, message)

    # --- Showing the errors of a rolled-back write on the forms they concern --------------------

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change, **kwargs)
        errors: FormErrors | None = getattr(request, _ERRORS_ATTRIBUTE, None)
        return _with_rule_errors(form, errors) if errors else form

    def get_formsets_with_inlines(self, request: HttpRequest, obj: Any = None) -> Iterator[Any]:
        errors: FormErrors | None = getattr(request, _ERRORS_ATTRIBUTE, None)
        for formset, inline in super().get_formsets_with_inlines(request, obj):
            if errors:
                formset = type(formset.__name__, (formset,), {"form": _with_rule_errors(formset.form, errors)})
            yield formset, inline
