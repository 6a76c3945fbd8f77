"""Admin forms for rows whose rules live in the course-file schema: a card's concepts and a block's payload."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.forms.models import BaseInlineFormSet

from apps.content.content_files.schema import block_payload
from apps.content.content_files.source import format_location
from apps.content.content_files.validate import block_doc_from_data
from apps.content.models import Concept, Deck

# A block's own fields; everything else in a course file's block is its payload.
_BLOCK_FIELDS = ("kind", "heading", "question")


class CardAdminForm(forms.ModelForm):
    """A card with the concepts that teach it, chosen among its course's concepts (the admin sets model and fields)."""

    concepts = forms.ModelMultipleChoiceField(
        queryset=Concept.objects.none(),
        required=False,
        # A short list box fits a table row; a course has a few dozen concepts.
        widget=forms.SelectMultiple(attrs={"size": 4}),
        help_text="The concepts that teach this card. A card that is not archived needs at least one.",
    )

    def __init__(self, *args: Any, deck: Deck | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deck = deck if deck is not None and deck.pk else (self.instance.deck if self.instance.deck_id else None)
        concepts = Concept.objects.select_related("course").order_by("course__title", "position")
        if self.deck is not None:
            concepts = concepts.filter(course_id=self.deck.lesson.course_id)
        concepts_field = self.fields["concepts"]
        assert isinstance(concepts_field, forms.ModelMultipleChoiceField)  # noqa: S101 - declared above
        concepts_field.queryset = concepts
        if self.instance.pk is not None:
            self.initial["concepts"] = [concept.pk for concept in self.instance.concepts.all()]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        deck = cleaned.get("deck") or self.deck
        chosen = cleaned.get("concepts") or []
        if deck is not None:
            foreign = [concept.name for concept in chosen if concept.course_id != deck.lesson.course_id]
            if foreign:
                self.add_error("concepts", f"Not concepts of this card's course: {', '.join(foreign)}.")
        return cleaned

    def _save_m2m(self) -> None:
        super()._save_m2m()  # type: ignore[misc]
        if "concepts" in self.cleaned_data:
            self.instance.concepts.set(self.cleaned_data["concepts"])


class CardConceptsFormSetMixin(BaseInlineFormSet):
    """Cards on their deck's page: every row, new ones included, offers the deck's course's concepts."""

    def get_form_kwargs(self, index: int | None) -> dict[str, Any]:
        return {**super().get_form_kwargs(index), "deck": self.instance}


class ReadableJSONField(forms.JSONField):
    """JSON shown indented, one key per line, so a payload or a grading spec can be read and edited in place.

    Whether it changed is decided on the parsed value, so the layout is never a change.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 12, "cols": 90, "spellcheck": "false"}))
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, forms.fields.InvalidJSONInput):
            return value
        return json.dumps(value, ensure_ascii=False, indent=2, cls=self.encoder)


class LessonBlockAdminForm(forms.ModelForm):
    """A block checked as a course file's block is, and stored with the payload the loader would store.

    The admin sets its model and fields.
    """

    payload = ReadableJSONField(required=False, help_text="The block's fields as in a course file, as JSON.")

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        kind, payload = cleaned.get("kind"), cleaned.get("payload")
        if not kind or "payload" in self.errors:
            return cleaned
        if not isinstance(payload, dict):
            self.add_error("payload", "The payload is a JSON object of the block's fields, as in a course file.")
            return cleaned
        misplaced = [name for name in _BLOCK_FIELDS if name in payload]
        if misplaced:
            self.add_error("payload", f"Set {', '.join(misplaced)} in its own field, not in the payload.")
            return cleaned
        question = cleaned.get("question")
        block, errors = block_doc_from_data(
            {
                "kind": kind,
                "heading": cleaned.get("heading", ""),
                **payload,
                **({"question": question.slug} if question is not None else {}),
            }
        )
        for location, message in errors:
            name = location[0] if location else None
            if name in _BLOCK_FIELDS and name in self.fields:
                self.add_error(str(name), message)
            else:
                self.add_error("payload", f"{format_location(location)}: {message}" if location else message)
        if block is not None:
            cleaned["payload"] = block_payload(block)
            cleaned["heading"] = block.heading
        return cleaned
