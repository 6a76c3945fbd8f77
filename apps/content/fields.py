"""Model and form fields that store authored text already normalized, so an unchanged form changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.db import models

from apps.content.text import authored_line, authored_text


def _normalized(value: Any, rule: Callable[[str], str]) -> Any:
    return rule(value) if isinstance(value, str) else value


class AuthoredTextFormField(forms.CharField):
    """A form field that applies the authored-text rule, so a browser's CRLF compares equal to the stored LF."""

    rule: Callable[[str], str] = staticmethod(authored_text)

    def __init__(self, **kwargs: Any) -> None:
        # Django's own stripping would drop the first line's indentation, which code needs.
        kwargs["strip"] = False
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> str:
        return _normalized(super().to_python(value), type(self).rule)


class AuthoredLineFormField(AuthoredTextFormField):
    rule = staticmethod(authored_line)


class _AuthoredField:
    """Normalizes on every way in: forms and fixtures (to_python), queries (get_prep_value), saves (pre_save)."""

    rule: Callable[[str], str]
    form_class: type[forms.CharField]
    attname: str

    def to_python(self, value: Any) -> Any:
        return _normalized(super().to_python(value), type(self).rule)  # type: ignore[misc]

    def get_prep_value(self, value: Any) -> Any:
        return _normalized(super().get_prep_value(value), type(self).rule)  # type: ignore[misc]

    def pre_save(self, model_instance: models.Model, add: bool) -> Any:
        # Keeps the instance equal to its row after save(), not only the row itself.
        value = _normalized(getattr(model_instance, self.attname), type(self).rule)
        setattr(model_instance, self.attname, value)
        return value

    def formfield(self, **kwargs: Any) -> Any:
        return super().formfield(**{"form_class": self.form_class, **kwargs})  # type: ignore[misc]


class AuthoredTextField(_AuthoredField, models.TextField):
    """Multi-line authored text (definitions, code, prose), stored by the rule of `authored_text`."""

    rule = staticmethod(authored_text)
    form_class = AuthoredTextFormField


class AuthoredCharField(_AuthoredField, models.CharField):
    """Single-line authored text (titles, terms, names, headings), stored with surrounding whitespace removed."""

    rule = staticmethod(authored_line)
    form_class = AuthoredLineFormField
