"""Page-number pagination with a client-chosen page size, capped; a malformed page or size is a 400."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Page, Paginator
from rest_framework import pagination, serializers
from rest_framework.request import Request

from apps.common.fields import BIGINT_MAX
from apps.common.query import QueryIntegerField, query_params_validate

DEFAULT_PAGE_SIZE = 50
# Large enough for a whole deck in one call, small enough to bound a response.
MAX_PAGE_SIZE = 200


class PageQuery(serializers.Serializer):
    page = QueryIntegerField(min_value=1, required=False, help_text="Page number, from 1.")
    page_size = QueryIntegerField(
        min_value=1, max_value=MAX_PAGE_SIZE, required=False, help_text=f"Items per page, 1 to {MAX_PAGE_SIZE}."
    )


class CountSparingPaginator(Paginator):
    """Django's, reading a page first and counting only when the page cannot tell the total.

    A page with fewer rows than a full one is the last: the total is the rows before it plus its
    own, so most lists (a course's few decks, a short history) cost one query instead of two. A full
    page, or an empty one past the first, is counted as Django does.
    """

    def page(self, number: Any) -> Any:
        if self.orphans or not isinstance(number, int) or number < 1:
            return super().page(number)
        bottom = (number - 1) * self.per_page
        if bottom + self.per_page > BIGINT_MAX:
            # Past any table's end, and past what the database takes as an offset: counted, then refused.
            return super().page(number)
        rows = list(self.object_list[bottom : bottom + self.per_page])
        if len(rows) == self.per_page or (not rows and number > 1):
            return super().page(number)
        # cached_property: the count is known, so Django's own bookkeeping reads it from here.
        self.__dict__["count"] = bottom + len(rows)
        return Page(rows, number, self)


class PageNumberPagination(pagination.PageNumberPagination):
    """DRF's, except that `page` and `page_size` are validated: DRF falls back to defaults (or clamps)
    on any value it cannot use, so a client's bug would pass unnoticed."""

    django_paginator_class = CountSparingPaginator
    page_size = DEFAULT_PAGE_SIZE
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
    # Only numbers: the schema says page is an integer.
    last_page_strings = ()

    def _query(self, request: Request) -> dict[str, Any]:
        # Read once per request: DRF asks for the size and the number apart.
        query: dict[str, Any] | None = getattr(request, "_page_query", None)
        if query is None:
            query = query_params_validate(query_params=request.query_params, serializer_class=PageQuery)
            request._page_query = query  # type: ignore[attr-defined]
        return query

    def get_page_size(self, request: Request) -> int:
        size: int = self._query(request).get("page_size", self.page_size)
        return size

    def get_page_number(self, request: Request, paginator: Paginator) -> int:
        number: int = self._query(request).get("page", 1)
        return number

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        # Every page carries all four keys (next and previous as null at the ends).
        paginated: dict[str, Any] = super().get_paginated_response_schema(schema)
        paginated["required"] = ["count", "next", "previous", "results"]
        return paginated

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters: list[dict[str, Any]] = super().get_schema_operation_parameters(view)
        # The bounds PageQuery checks, so the schema cannot offer a page number the server refuses.
        bounds = {
            name: {"minimum": field.min_value, "maximum": field.max_value}
            for name, field in PageQuery().fields.items()
            if isinstance(field, QueryIntegerField)
        }
        for parameter in parameters:
            parameter["schema"] = {**parameter["schema"], **bounds.get(parameter["name"], {})}
        return parameters
