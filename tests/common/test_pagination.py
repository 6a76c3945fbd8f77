"""The count-sparing paginator: what Django's paginator answers, with one query where the page tells the total."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.paginator import EmptyPage, Paginator
from django.db import connection
from django.db.models import QuerySet
from django.test.utils import CaptureQueriesContext

from apps.common.pagination import CountSparingPaginator

pytestmark = pytest.mark.django_db


def _users(count: int) -> None:
    model = get_user_model()
    model.objects.bulk_create(model(username=f"paged-{i:03d}", password="!") for i in range(count))


def _listed() -> QuerySet[Any]:
    return get_user_model().objects.filter(username__startswith="paged-").order_by("username")


def _page_facts(paginator: Paginator[Any], number: int) -> tuple[object, ...]:
    page = paginator.page(number)
    return (
        [user.username for user in page.object_list],
        paginator.count,
        paginator.num_pages,
        page.has_next(),
        page.has_previous(),
        page.start_index(),
        page.end_index(),
    )


@pytest.mark.parametrize("total", [0, 1, 4, 5, 6, 10, 11, 14])
def test_every_page_answers_as_djangos_paginator_does(total):
    _users(total)
    for number in range(1, total // 5 + 3):
        ours = CountSparingPaginator(_listed(), 5)
        django: Paginator[Any] = Paginator(_listed(), 5)
        try:
            expected = _page_facts(django, number)
        except EmptyPage:
            with pytest.raises(EmptyPage):
                ours.page(number)
            continue
        assert _page_facts(ours, number) == expected, (total, number)


def test_a_page_shorter_than_full_costs_one_query_and_a_full_one_is_counted():
    _users(12)
    with CaptureQueriesContext(connection) as short:
        page = CountSparingPaginator(_listed(), 5).page(3)
        assert page.paginator.count == 12
    assert len(short.captured_queries) == 1, short.captured_queries

    with CaptureQueriesContext(connection) as full:
        page = CountSparingPaginator(_listed(), 5).page(1)
        assert page.paginator.count == 12
    assert len(full.captured_queries) == 2, full.captured_queries


def test_a_page_past_the_end_is_refused_as_django_refuses_it():
    _users(3)
    with pytest.raises(EmptyPage):
        CountSparingPaginator(_listed(), 5).page(2)
    assert CountSparingPaginator(_listed(), 5).page(1).paginator.count == 3


def test_a_page_number_past_any_offset_the_database_takes_is_refused_not_failed():
    _users(3)
    with pytest.raises(EmptyPage):
        CountSparingPaginator(_listed(), 50).page(576460752303423487)
