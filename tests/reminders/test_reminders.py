"""Review reminder emails: when they go, what they say, never twice a local day, unsubscribe."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import resolve

from apps.common.greeting import greeting_name
from apps.content.models import Card
from apps.reminders.models import ReminderEmail, ReminderPreference, ReminderStatus
from apps.reminders.services import (
    reminder_batch_send,
    reminders_send,
    unsubscribe_token,
)
from apps.srs.models import SchedulingSettings
from tests.support.reminders import local, make_learner
from tests.support.reviews import run_together

NEW_YORK = ZoneInfo("America/New_York")


@pytest.fixture
def course(shipped_course) -> None:
    mail.outbox.clear()


def test_sends_at_the_learners_local_hour_with_cards_due_per_deck_and_both_parts(course):
    make_learner("ada", hour=18, due_cards=3)
    assert reminders_send(now=local(2026, 6, 10, 17, 45)).sent == 0
    run = reminders_send(now=local(2026, 6, 10, 18, 0))
    assert run.sent == 1
    [message] = mail.outbox
    assert message.to == ["ada@example.com"]
    assert message.subject == "3 cards due today"
    assert "You have 3 cards to review today" in message.body
    deck_title = Card.objects.order_by("pk").first().deck.title  # type: ignore[union-attr]
    assert f"{deck_title}: 3" in message.body
    html, mimetype = message.alternatives[0]  # type: ignore[attr-defined]
    assert mimetype == "text/html"
    assert "<strong>3 cards</strong>" in html
    assert f"{settings.FRONTEND_URL}/study" in message.body
    deck_slug = Card.objects.order_by("pk").first().deck.slug  # type: ignore[union-attr]
    assert f"{settings.FRONTEND_URL}/decks/{deck_slug}/study" in message.body
    record = ReminderEmail.objects.get()
    assert (record.status, record.due_cards, str(record.local_date)) == (ReminderStatus.SENT, 3, "2026-06-10")


def test_the_learner_is_greeted_by_display_name_in_both_parts(course):
    make_learner("ada", display_name="Ada <L> & co")
    reminders_send(now=local(2026, 6, 10, 18, 0))
    [message] = mail.outbox
    assert isinstance(message, mail.EmailMultiAlternatives)
    html = str(message.alternatives[0][0])
    assert message.body.startswith("Hello Ada <L> & co,\n")
    assert "<p>Hello Ada &lt;L&gt; &amp; co,</p>" in html
    assert "ada@example.com" not in message.body and "ada@example.com" not in html


@pytest.mark.parametrize("display_name", [None, "", "   "])
@pytest.mark.parametrize(("username", "greeting"), [("ada", "Hello ada,"), ("ada.lovelace@example.com", "Hello,")])
def test_without_a_display_name_the_greeting_is_a_username_never_an_address(course, display_name, username, greeting):
    """The rule account email follows too (apps.common.greeting): never the address, whole or in part."""
    learner_id = make_learner("ada", display_name=display_name)
    get_user_model().objects.filter(pk=learner_id).update(
        username=username, email="ada.lovelace@example.com", first_name="Augusta"
    )
    reminders_send(now=local(2026, 6, 10, 18, 0))
    [message] = mail.outbox
    assert isinstance(message, mail.EmailMultiAlternatives)
    html = str(message.alternatives[0][0])
    assert message.body.startswith(f"{greeting}\n")
    assert f"<p>{greeting}</p>" in html
    assert "lovelace" not in message.body.split("\n")[0]


@pytest.mark.parametrize(
    ("display_name", "username", "expected"),
    [
        ("  Zoë  ", "z@example.com", "Zoë"),
        (None, "grace.hopper@example.com", ""),
        ("", "first.last+tag@example.com", ""),
        (" ", "grace", "grace"),
        (None, "no-at-sign", "no-at-sign"),
    ],
)
def test_greeting_name(display_name, username, expected):
    assert greeting_name(display_name=display_name, username=username) == expected


def test_unsubscribe_headers_point_at_a_signed_link_that_needs_no_login(course, client):
    learner_id = make_learner("ada")
    reminders_send(now=local(2026, 6, 10, 18, 0))
    [message] = mail.outbox
    assert message.extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    url = re.fullmatch(r"<(.+)>", message.extra_headers["List-Unsubscribe"]).group(1)  # type: ignore[union-attr]
    assert url in message.body
    path = url.removeprefix(settings.SITE_URL)
    # Opening the link asks to confirm; link scanners that follow it change nothing.
    page = client.get(path)
    assert page.status_code == 200 and b'<form method="post">' in page.content
    assert ReminderPreference.objects.get(learner_id=learner_id).enabled
    # The one-click POST of RFC 8058, without a session or CSRF token.
    done = client.post(path, {"List-Unsubscribe": "One-Click"})
    # The confirmation is the web app's own page, served at one of its routes.
    assert done.status_code == 303 and done["Location"] == f"{settings.FRONTEND_URL}/unsubscribed"
    assert resolve(done["Location"].removeprefix(settings.FRONTEND_URL)).url_name == "unsubscribed"
    # The page that asked to confirm leads back to the web app: its home, and the settings that turn reminders on.
    assert f'<a href="{settings.FRONTEND_URL}/">Back to Quizsite</a>' in page.content.decode()
    assert not ReminderPreference.objects.get(learner_id=learner_id).enabled
    assert reminders_send(now=local(2026, 6, 11, 18, 0)).sent == 0


def test_a_tampered_unsubscribe_link_changes_nothing(course, client):
    learner_id = make_learner("ada")
    token = unsubscribe_token(learner_id=learner_id)
    forged = token.replace(token[-3:], "abc" if token[-3:] != "abc" else "abd")
    response = client.post(f"/email/unsubscribe/{forged}/")
    assert response.status_code == 400 and b"not valid" in response.content
    assert ReminderPreference.objects.get(learner_id=learner_id).enabled


def test_a_late_run_still_sends_within_the_window_but_not_after_it(course):
    make_learner("ada", hour=8)
    make_learner("bob", hour=5)
    run = reminders_send(now=local(2026, 6, 10, 9, 30))
    # Ada's 8:00 window is open until 11:00; Bob's 5:00 one closed at 8:00.
    assert run.sent == 1 and mail.outbox[0].to == ["ada@example.com"]


def test_never_twice_on_one_local_day_even_when_the_job_runs_again(course):
    make_learner("ada", hour=18)
    for minutes in range(0, 6 * 60, 15):
        reminders_send(now=local(2026, 6, 10, 18) + timedelta(minutes=minutes))
    assert len(mail.outbox) == 1
    reminders_send(now=local(2026, 6, 11, 18, 15))
    assert len(mail.outbox) == 2
    assert ReminderEmail.objects.filter(status=ReminderStatus.SENT).count() == 2


@pytest.mark.django_db(transaction=True)
def test_runs_overlapping_on_several_workers_send_each_email_once(shipped_course):
    mail.outbox.clear()
    for index in range(6):
        make_learner(f"learner{index}", hour=18)
    now = local(2026, 6, 10, 18, 5)
    runs = run_together(4, lambda _: reminders_send(now=now, batch_size=2))
    assert sorted(message.to[0] for message in mail.outbox) == [f"learner{index}@example.com" for index in range(6)]
    assert sum(run.sent for run in runs) == 6
    assert sum(run.already_decided for run in runs) == sum(run.candidates for run in runs) - 6


def test_nothing_due_sends_nothing_unless_configured(course, settings):
    make_learner("ada", due_cards=0)
    run = reminders_send(now=local(2026, 6, 10, 18))
    assert (run.sent, run.skipped, len(mail.outbox)) == (0, 1, 0)
    assert ReminderEmail.objects.get().status == ReminderStatus.SKIPPED
    settings.REMINDER_SEND_WHEN_NOTHING_DUE = True
    make_learner("bob", due_cards=0)
    run = reminders_send(now=local(2026, 6, 10, 18, 15))
    assert run.sent == 1 and mail.outbox[0].subject == "Nothing due today"


def test_learners_who_did_not_opt_in_or_have_no_email_get_nothing(course):
    make_learner("ada")
    ReminderPreference.objects.filter(learner__username="ada").update(enabled=False)
    bob = make_learner("bob")
    get_user_model().objects.filter(pk=bob).update(email="")
    assert reminders_send(now=local(2026, 6, 10, 18)).candidates == 0
    assert mail.outbox == []


@pytest.mark.parametrize(
    ("hour", "first_day", "expected_days"),
    [
        # Clocks go back at 2:00 on 1 November 2026: 1:00-2:00 happens twice.
        (1, datetime(2026, 10, 31, tzinfo=UTC), ["2026-10-31", "2026-11-01", "2026-11-02"]),
        # Clocks go forward at 2:00 on 8 March 2026: 2:00-3:00 never happens; the email goes at 3:00.
        (2, datetime(2026, 3, 7, tzinfo=UTC), ["2026-03-07", "2026-03-08", "2026-03-09"]),
    ],
)
def test_daylight_saving_changes_neither_skip_nor_double_a_day(course, hour, first_day, expected_days):
    make_learner("ada", timezone="America/New_York", hour=hour)
    now = first_day
    while now < first_day + timedelta(days=3):
        reminders_send(now=now)
        now += timedelta(minutes=15)
    records = ReminderEmail.objects.order_by("local_date")
    assert [str(record.local_date) for record in records] == expected_days
    assert len(mail.outbox) == 3
    sent_local_hours = [record.sent_at.astimezone(NEW_YORK).hour for record in records]  # type: ignore[union-attr]
    assert sent_local_hours == [hour, 3 if hour == 2 else hour, hour]


def test_streak_is_in_the_email(course, learner_client, learner):
    learner.email = "ada@example.com"
    learner.save()
    SchedulingSettings.objects.create(learner=learner, timezone="UTC")
    ReminderPreference.objects.create(learner=learner, enabled=True, local_hour=18)
    card = Card.objects.order_by("pk").first()
    today = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    for days_ago in (2, 1):
        response = learner_client.post(
            "/api/v1/reviews/",
            {
                "card": card.pk,  # type: ignore[union-attr]
                "rating": 1,
                "client_review_id": f"00000000-0000-4000-8000-00000000000{days_ago}",
                "reviewed_at": (today - timedelta(days=days_ago)).isoformat(),
            },
            format="json",
        )
        assert response.status_code == 201, response.content
    reminders_send(now=today.replace(hour=18))
    [message] = mail.outbox
    assert "You have studied 2 days in a row." in message.body
    assert "keep your 2-day streak" in message.subject


def test_queries_grow_with_batches_not_learners(course):
    def queries_for(learners: int, date_: int) -> int:
        for index in range(learners):
            make_learner(f"q{date_}-{index}", hour=18)
        with CaptureQueriesContext(connection) as captured:
            run = reminders_send(now=local(2026, 6, date_, 18), batch_size=50)
        assert run.sent == learners
        ReminderPreference.objects.update(enabled=False)
        return len(captured.captured_queries)

    assert queries_for(3, 10) == queries_for(40, 11)


def test_a_batch_sent_again_sends_nothing_twice(course):
    make_learner("ada")
    make_learner("bob")
    claims: list = []
    run = reminders_send(now=local(2026, 6, 10, 18), send_batch=claims.append)
    assert (run.claimed, run.sent, len(claims), mail.outbox) == (2, 0, 1, [])
    assert set(ReminderEmail.objects.values_list("status", flat=True)) == {ReminderStatus.CLAIMED}
    first = reminder_batch_send(claim=claims[0], now=local(2026, 6, 10, 18, 1))
    again = reminder_batch_send(claim=claims[0], now=local(2026, 6, 10, 18, 2))
    assert (first.sent, again.sent, len(mail.outbox)) == (2, 0, 2)
    assert set(ReminderEmail.objects.values_list("status", flat=True)) == {ReminderStatus.SENT}


def test_the_message_as_sent_over_smtp_reads_back_whole(course):
    from datetime import date
    from email import message_from_bytes
    from email import policy as email_policy

    from apps.reminders.services import DeckDue, Reminder, reminder_message

    reminder = Reminder(
        learner_id=7,
        email="zoë@example.com",
        name="Zoë",
        local_date=date(2026, 6, 10),
        decks=[DeckDue(slug="tf-data-pipelines", title="Données & pipelines", cards=4)],
        streak=12,
    )
    raw = reminder_message(reminder).message(policy=email_policy.SMTP).as_bytes()
    assert b"\r\n" in raw and b"\n" not in raw.replace(b"\r\n", b"")
    parsed = message_from_bytes(raw, policy=email_policy.default)
    assert parsed["Subject"] == "4 cards due today · keep your 12-day streak"
    assert parsed["List-Unsubscribe"].startswith(f"<{settings.SITE_URL}/email/unsubscribe/")
    assert parsed["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert parsed["Message-ID"] and parsed["Date"]
    text = parsed.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    html = parsed.get_body(preferencelist=("html",)).get_content()  # type: ignore[union-attr]
    assert "Hello Zoë," in text and "Données & pipelines: 4" in text
    assert "Données &amp; pipelines</a>: 4" in html
