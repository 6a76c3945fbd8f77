"""Admin change forms read from their HTML and filled in exactly as a browser submits them."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from django.db import models
from django.urls import reverse

# Controls a browser leaves out of a submission unless they are the one clicked.
_UNSUBMITTED_INPUT_TYPES = frozenset({"submit", "button", "image", "reset", "file"})


class _Select:
    def __init__(self, name: str, multiple: bool) -> None:
        self.name = name
        self.multiple = multiple
        self.options: list[tuple[str, bool]] = []


class _FormScraper(HTMLParser):
    """The successful controls of one form, in document order, as (name, value) pairs."""

    def __init__(self, form_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.in_form = False
        self.found = False
        self.pairs: list[tuple[str, str]] = []
        self.textarea_name: str | None = None
        self.textarea_text: list[str] = []
        self.select: _Select | None = None
        self.option_value: str | None = None
        self.option_selected = False
        self.option_text: list[str] = []
        self.option_open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value if value is not None else "" for name, value in attrs}
        if tag == "form":
            if attributes.get("id") == self.form_id:
                self.in_form = self.found = True
            return
        if not self.in_form or "disabled" in attributes:
            return
        name = attributes.get("name")
        if tag == "input" and name:
            kind = attributes.get("type", "text").lower()
            if kind in _UNSUBMITTED_INPUT_TYPES:
                return
            if kind in {"checkbox", "radio"}:
                if "checked" in attributes:
                    self.pairs.append((name, attributes.get("value", "on")))
                return
            self.pairs.append((name, attributes.get("value", "")))
        elif tag == "textarea" and name:
            self.textarea_name, self.textarea_text = name, []
        elif tag == "select" and name:
            self.select = _Select(name, "multiple" in attributes)
        elif tag == "option" and self.select is not None:
            self._close_option()
            self.option_open = True
            self.option_value = attributes.get("value")
            self.option_selected = "selected" in attributes
            self.option_text = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self.in_form:
            self.in_form = False
        elif tag == "textarea" and self.textarea_name is not None:
            text = "".join(self.textarea_text)
            # The HTML parser drops one line break right after <textarea>; a browser submits CRLF line breaks.
            if text.startswith("\r\n"):
                text = text[2:]
            elif text.startswith("\n"):
                text = text[1:]
            text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\r\n")
            self.pairs.append((self.textarea_name, text))
            self.textarea_name = None
        elif tag == "option":
            self._close_option()
        elif tag == "select" and self.select is not None:
            self._close_option()
            selected = [value for value, is_selected in self.select.options if is_selected]
            if not self.select.multiple and not selected and self.select.options:
                # A single select with nothing marked submits its first option.
                selected = [self.select.options[0][0]]
            self.pairs += [(self.select.name, value) for value in selected[: None if self.select.multiple else 1]]
            self.select = None

    def handle_data(self, data: str) -> None:
        if self.textarea_name is not None:
            self.textarea_text.append(data)
        elif self.option_open:
            self.option_text.append(data)

    def _close_option(self) -> None:
        if self.option_open and self.select is not None:
            value = self.option_value if self.option_value is not None else "".join(self.option_text).strip()
            self.select.options.append((value, self.option_selected))
        self.option_open = False


def form_submission(html: str, form_id: str) -> dict[str, list[str]]:
    """What a browser posts when the form with this id is submitted untouched, by name."""
    scraper = _FormScraper(form_id)
    scraper.feed(html)
    scraper.close()
    if not scraper.found:
        raise ValueError(f"no form with id {form_id!r} in the page")
    data: dict[str, list[str]] = {}
    for name, value in scraper.pairs:
        data.setdefault(name, []).append(value)
    return data


def admin_url(model: type[models.Model], view: str, *args: object) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def change_form_data(response: Any) -> dict[str, Any]:
    """What a browser would post back from a change page left as it is, inlines included, read from the forms."""
    forms = [response.context["adminform"].form]
    for inline in response.context["inline_admin_formsets"]:
        forms += [inline.formset.management_form, *inline.formset.forms]
    data: dict[str, Any] = {}
    for form in forms:
        for field in form:
            # value() is already prepared for the widget (JSON as text); preparing it again would quote it twice.
            value = field.value()
            if isinstance(value, bool):
                if value:
                    data[field.html_name] = "on"
            elif isinstance(value, list | tuple):
                data[field.html_name] = [str(item) for item in value]
            elif value is not None:
                data[field.html_name] = str(value)
    return data
