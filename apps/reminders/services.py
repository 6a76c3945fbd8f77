"""Review reminder emails: who gets one now, what it says, and sending it at most once a local day.

Learners are handled in groups that share a timezone and a day-start hour, and within a group in
batches, so the number of queries grows with groups and batches, never with learners.
"""

from __future__ import annotations

import email.policy
import logging
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from email.header import Header
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.utils import formatdate, make_msgid
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.core import signing
from django.core.mail import EmailMultiAlternatives, get_connection
from django.core.mail.utils import DNS_NAME
from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.template.loader import render_to_string
from django.urls import reverse

from apps.common.errors import DomainError
from apps.common.greeting import greeting_name
from apps.content.models import Deck, visible_card_filter
from apps.reminders.models import ReminderEmail, ReminderPreference, ReminderStatus
from apps.srs.models import CardMemory, ReviewLog, SchedulingSettings
from apps.srs.progress.stats import learner_day, streak_of_days, with_local_day
from apps.srs.settings.config import learner_day_bounds

logger = logging.getLogger(__name__)

UNSUBSCRIBE_SALT = "reminders.unsubscribe"
# A streak longer than this is shown as this many days: reading a whole history for it is not worth it.
STREAK_LOOKBACK_DAYS = 366
# A batch still claimed this long after its run was not picked up by a worker (or its send failed).
CLAIM_RETRY_AFTER = timedelta(minutes=10)
# Learners with no scheduling settings row have the model's defaults.
_DEFAULTS = SchedulingSettings()


class InvalidUnsubscribeLink(DomainError):
    code = "invalid_link"


@dataclass(frozen=True)
class DeckDue:
    slug: str
    title: str
    cards: int


@dataclass(frozen=True)
class Reminder:
    """What one learner's email says."""

    learner_id: int
    email: str
    name: str
    local_date: date
    decks: list[DeckDue]
    streak: int

    @property
    def due_cards(self) -> int:
        return sum(deck.cards for deck in self.decks)


@dataclass
class ReminderRun:
    """What one run did; `on_progress` gets it after every batch."""

    groups: int = 0
    batches: int = 0
    candidates: int = 0
    claimed: int = 0
    sent: int = 0
    skipped: int = 0
    failed: int = 0
    already_decided: int = 0
    # Batches of earlier runs sent again (they had not gone out).
    retried: int = 0


def unsubscribe_token(*, learner_id: int) -> str:
    return signing.dumps({"learner": learner_id}, salt=UNSUBSCRIBE_SALT)


def unsubscribe_url(*, learner_id: int) -> str:
    path = reverse("reminders-unsubscribe", kwargs={"token": unsubscribe_token(learner_id=learner_id)})
    return f"{settings.SITE_URL}{path}"


def reminders_unsubscribe(*, token: str) -> int:
    """Turn a learner's reminders off from a signed link; returns the learner's id."""
    try:
        payload = signing.loads(token, salt=UNSUBSCRIBE_SALT)
        learner_id = int(payload["learner"])
    except (signing.BadSignature, KeyError, TypeError, ValueError) as error:
        raise InvalidUnsubscribeLink("This unsubscribe link is not valid.") from error
    ReminderPreference.objects.filter(learner_id=learner_id).update(enabled=False)
    return learner_id


def reminder_preference_get(*, learner: Any) -> ReminderPreference:
    """The learner's preference, unsaved with the defaults when they never set one."""
    try:
        return ReminderPreference.objects.get(learner=learner)
    except ReminderPreference.DoesNotExist:
        return ReminderPreference(learner=learner)


def reminder_preference_update(
    *, learner: Any, enabled: bool | None = None, local_hour: int | None = None
) -> ReminderPreference:
    preference = reminder_preference_get(learner=learner)
    if enabled is not None:
        preference.enabled = enabled
    if local_hour is not None:
        preference.local_hour = local_hour
    preference.save()
    return preference


def _groups() -> list[tuple[str | None, int | None]]:
    """(timezone, day start hour) of opted-in learners; (None, None) for learners without settings."""
    return list(
        ReminderPreference.objects.filter(enabled=True)
        .values_list("learner__scheduling_settings__timezone", "learner__scheduling_settings__day_start_hour")
        .distinct()
        .order_by()
    )


def _hours_to_send(local_now: datetime) -> list[int]:
    """Chosen hours whose sending window is open now; the window never reaches past local midnight."""
    window = settings.REMINDER_SEND_WINDOW_HOURS
    return list(range(max(0, local_now.hour - window + 1), local_now.hour + 1))


def _candidates(
    *, timezone: str | None, day_start_hour: int | None, hours: list[int], local_date: date
) -> QuerySet[ReminderPreference]:
    if timezone is None:
        group = Q(learner__scheduling_settings__isnull=True)
    else:
        group = Q(
            learner__scheduling_settings__timezone=timezone,
            learner__scheduling_settings__day_start_hour=day_start_hour,
        )
    decided = ReminderEmail.objects.filter(learner_id=OuterRef("learner_id"), local_date=local_date)
    return (
        ReminderPreference.objects.filter(group, enabled=True, local_hour__in=hours, learner__is_active=True)
        .exclude(learner__email="")
        .filter(~Exists(decided))
    )


def _batches(candidates: QuerySet[ReminderPreference], size: int) -> Iterator[list[dict[str, Any]]]:
    """Keyset pages by learner id: each page is one query, whatever came before it."""
    last = 0
    while True:
        page = list(candidates.filter(learner_id__gt=last).order_by("learner_id").values("learner_id")[:size])
        if not page:
            return
        yield [dict(row) for row in page]
        last = page[-1]["learner_id"]


def _due_by_learner(*, learner_ids: list[int], day_end: datetime, decks: dict[int, Deck]) -> dict[int, list[DeckDue]]:
    rows = (
        CardMemory.objects.filter(
            visible_card_filter("card__"), learner_id__in=learner_ids, due__lt=day_end, suspended=False
        )
        .values("learner_id", "card__deck_id")
        .annotate(cards=Count("pk"))
        .order_by()
    )
    due: dict[int, list[DeckDue]] = defaultdict(list)
    for row in rows:
        deck = decks[row["card__deck_id"]]
        due[row["learner_id"]].append(DeckDue(slug=deck.slug, title=deck.title, cards=row["cards"]))
    for items in due.values():
        items.sort(key=lambda item: (-item.cards, item.title))
    return due


def _streaks(*, learner_ids: list[int], day_settings: SchedulingSettings, today: date, now: datetime) -> dict[int, int]:
    logs = ReviewLog.objects.standing().filter(
        learner_id__in=learner_ids, reviewed_at__gte=now - timedelta(days=STREAK_LOOKBACK_DAYS)
    )
    rows = (
        with_local_day(logs, field="reviewed_at", settings=day_settings)
        .values_list("learner_id", "local_date", "early")
        .distinct()
        .order_by()
    )
    days: dict[int, set[date]] = defaultdict(set)
    for learner_id, local_date, early in rows:
        days[learner_id].add(learner_day(local_date, early))
    return {learner_id: streak_of_days(learner_days, today=today).current for learner_id, learner_days in days.items()}


class _ReminderEmailMessage(EmailMultiAlternatives):
    """A reminder built with the standard library's compat32 MIME classes.

    A run may send 100,000 of them: the default policy's header objects make a message about three
    times dearer to build and serialize. Lines may be as long as RFC 5322's 998 characters, so the
    long List-Unsubscribe URL stays on one line (the default policy would fold it into an encoded word
    that mail clients do not read as a link).
    """

    def message(self, *, policy: Any = None) -> Any:
        message = MIMEMultipart("alternative")
        subject = str(self.subject)
        message["Subject"] = subject if subject.isascii() else Header(subject, "utf-8").encode()
        message["From"] = self.from_email
        message["To"] = ", ".join(self.to)
        message["Date"] = formatdate()
        message["Message-ID"] = make_msgid(domain=str(DNS_NAME))
        for name, value in self.extra_headers.items():
            message[name] = value
        message.attach(MIMEText(str(self.body), "plain", "utf-8"))
        for content, mimetype in self.alternatives:
            message.attach(MIMEText(str(content), mimetype.partition("/")[2], "utf-8"))
        # SMTP wants CRLF line ends, which the SMTP backend's policy asks for.
        message.policy = email.policy.compat32.clone(linesep=policy.linesep if policy else "\n", max_line_length=998)
        return message


def reminder_message(reminder: Reminder) -> EmailMultiAlternatives:
    """The email for one learner: plain text and HTML from templates, with one-click unsubscribe headers."""
    unsubscribe = unsubscribe_url(learner_id=reminder.learner_id)
    context = {
        "reminder": reminder,
        "study_url": f"{settings.FRONTEND_URL}/study",
        "deck_url_prefix": f"{settings.FRONTEND_URL}/decks/",
        "unsubscribe_url": unsubscribe,
    }
    subject = render_to_string("reminders/review_reminder_subject.txt", context).strip()
    message = _ReminderEmailMessage(
        subject=subject,
        body=render_to_string("reminders/review_reminder.txt", context),
        to=[reminder.email],
        headers={"List-Unsubscribe": f"<{unsubscribe}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
    )
    message.attach_alternative(render_to_string("reminders/review_reminder.html", context), "text/html")
    return message


def reminders_send(
    *,
    now: datetime,
    batch_size: int | None = None,
    send_batch: Callable[[uuid.UUID], object] | None = None,
    on_progress: Callable[[ReminderRun], None] | None = None,
) -> ReminderRun:
    """Decide every reminder whose hour has come, at most one per learner per local calendar day.

    Each batch first inserts its decisions (to send, or nothing due); the unique constraint on
    (learner, local day) lets only one run insert a given learner's row, and only the rows a run
    inserted are sent. Its claimed rows go to `send_batch` (the beat job queues one task per batch,
    so workers send in parallel); without it they are sent here and now.
    """
    size = batch_size or settings.REMINDER_BATCH_SIZE
    run = ReminderRun()
    decks = _decks()
    send = send_batch or (lambda claim: _send_here(claim, run=run, now=now))
    for claim in _stale_claims(now=now):
        run.retried += 1
        send(claim)
    for timezone, day_start_hour in _groups():
        try:
            zone = ZoneInfo(timezone or _DEFAULTS.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            logger.error("Learners with the unknown timezone %r get no reminders", timezone)
            continue
        run.groups += 1
        local_now = now.astimezone(zone)
        day_settings = _day_settings(zone.key, day_start_hour)
        _, day_end = learner_day_bounds(day_settings, now=now)
        candidates = _candidates(
            timezone=timezone,
            day_start_hour=day_start_hour,
            hours=_hours_to_send(local_now),
            local_date=local_now.date(),
        )
        for page in _batches(candidates, size):
            run.batches += 1
            run.candidates += len(page)
            claimed = _claim_batch(page, run=run, now=now, local_date=local_now.date(), day_end=day_end, decks=decks)
            if claimed is not None:
                send(claimed)
            if on_progress is not None:
                on_progress(run)
    return run


def _send_here(claim: uuid.UUID, *, run: ReminderRun, now: datetime) -> None:
    sent = reminder_batch_send(claim=claim, now=now)
    run.sent += sent.sent
    run.failed += sent.failed


def _day_settings(timezone: str, day_start_hour: int | None) -> SchedulingSettings:
    """Settings that fix a learner's day: a group's timezone and day start hour."""
    return SchedulingSettings(
        timezone=timezone, day_start_hour=_DEFAULTS.day_start_hour if day_start_hour is None else day_start_hour
    )


def _claim_batch(
    page: list[dict[str, Any]],
    *,
    run: ReminderRun,
    now: datetime,
    local_date: date,
    day_end: datetime,
    decks: dict[int, Deck],
) -> uuid.UUID | None:
    """Insert the batch's decisions; the claim id of the rows this run won that are to be sent, if any."""
    learner_ids = [row["learner_id"] for row in page]
    due = _due_by_learner(learner_ids=learner_ids, day_end=day_end, decks=decks)
    send_empty = settings.REMINDER_SEND_WHEN_NOTHING_DUE
    claim = uuid.uuid4()
    decisions = [
        ReminderEmail(
            learner_id=learner_id,
            local_date=local_date,
            status=ReminderStatus.CLAIMED if due.get(learner_id) or send_empty else ReminderStatus.SKIPPED,
            claim=claim,
            claimed_at=now,
            due_cards=sum(deck.cards for deck in due.get(learner_id, [])),
        )
        for learner_id in learner_ids
    ]
    ReminderEmail.objects.bulk_create(decisions, ignore_conflicts=True)
    won = Counter(ReminderEmail.objects.filter(claim=claim).values_list("status", flat=True))
    run.already_decided += len(learner_ids) - won.total()
    run.skipped += won[ReminderStatus.SKIPPED]
    run.claimed += won[ReminderStatus.CLAIMED]
    return claim if won[ReminderStatus.CLAIMED] else None


@dataclass(frozen=True)
class BatchSent:
    sent: int
    failed: int


def reminder_batch_send(*, claim: uuid.UUID, now: datetime) -> BatchSent:
    """Send the claimed reminders of one batch; a redelivered or repeated call sends none of them again.

    Rows move from claimed to sending in one locked transaction before any email goes out, so a
    second call finds nothing to send. A worker that dies while sending leaves its rows "sending":
    those learners miss that day's reminder rather than risk getting it twice.
    """
    connection = get_connection()
    # Opened before any row is marked as being sent: with the server unreachable the batch stays
    # claimed, and the next run sends it.
    connection.open()
    try:
        rows = _take_claimed(claim)
        sent: list[int] = []
        failed = 0
        for (timezone, day_start_hour), day_rows in _by_learner_day(rows).items():
            day_settings = _day_settings(timezone, day_start_hour)
            day_start, day_end = learner_day_bounds(day_settings, now=now)
            learner_ids = [row["learner_id"] for row in day_rows]
            due = _due_by_learner(learner_ids=learner_ids, day_end=day_end, decks=_decks())
            streaks = _streaks(learner_ids=learner_ids, day_settings=day_settings, today=day_start.date(), now=now)
            for row in day_rows:
                message = reminder_message(
                    Reminder(
                        learner_id=row["learner_id"],
                        email=row["learner__email"],
                        name=greeting_name(
                            display_name=row["learner__learner_profile__display_name"],
                            username=row["learner__username"],
                        ),
                        local_date=row["local_date"],
                        decks=due.get(row["learner_id"], []),
                        streak=streaks.get(row["learner_id"], 0),
                    )
                )
                message.connection = connection
                try:
                    message.send()
                except Exception as error:  # one bad address or a dropped connection must not stop the others
                    logger.warning("Reminder to learner %s failed: %s", row["learner_id"], error)
                    failed += 1
                    ReminderEmail.objects.filter(pk=row["pk"]).update(
                        status=ReminderStatus.FAILED, failure=str(error)[:1000]
                    )
                    # A dropped connection is opened again by the next send.
                    connection.close()
                    continue
                sent.append(row["pk"])
    finally:
        connection.close()
    ReminderEmail.objects.filter(pk__in=sent).update(status=ReminderStatus.SENT, sent_at=now)
    return BatchSent(sent=len(sent), failed=failed)


def _take_claimed(claim: uuid.UUID) -> list[dict[str, Any]]:
    """The batch's rows still to send, marked as being sent in the same transaction."""
    with transaction.atomic():
        rows: list[dict[str, Any]] = [
            dict(row)
            for row in ReminderEmail.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(claim=claim, status=ReminderStatus.CLAIMED)
            .values(
                "pk",
                "learner_id",
                "local_date",
                "learner__email",
                "learner__username",
                "learner__learner_profile__display_name",
                "learner__scheduling_settings__timezone",
                "learner__scheduling_settings__day_start_hour",
            )
        ]
        ReminderEmail.objects.filter(pk__in=[row["pk"] for row in rows]).update(status=ReminderStatus.SENDING)
    return rows


def _by_learner_day(rows: list[dict[str, Any]]) -> dict[tuple[str, int | None], list[dict[str, Any]]]:
    groups: dict[tuple[str, int | None], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        timezone = row["learner__scheduling_settings__timezone"] or _DEFAULTS.timezone
        groups[(timezone, row["learner__scheduling_settings__day_start_hour"])].append(row)
    return groups


def _decks() -> dict[int, Deck]:
    return {deck.pk: deck for deck in Deck.objects.all()}


def _stale_claims(*, now: datetime) -> list[uuid.UUID]:
    """Batches claimed by an earlier run and never picked up: a failed send or a lost task."""
    return list(
        ReminderEmail.objects.filter(
            status=ReminderStatus.CLAIMED,
            claimed_at__lt=now - CLAIM_RETRY_AFTER,
            claimed_at__gte=now - timedelta(hours=settings.REMINDER_SEND_WINDOW_HOURS),
        )
        .values_list("claim", flat=True)
        .distinct()
        .order_by()
    )
