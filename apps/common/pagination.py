"""Page-number pagination with a client-chosen page size, capped."""

from rest_framework import pagination


class PageNumberPagination(pagination.PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    # Large enough for a whole deck in one call, small enough to bound a response.
    max_page_size = 200
