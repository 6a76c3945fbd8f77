"""Property-based fuzzing of the whole API from its own OpenAPI schema, signed in as a learner.

Every operation gets generated requests, valid and invalid, with every check schemathesis has: no 5xx,
every response as the schema says (status, content type, headers, body), invalid requests refused
and valid ones accepted, authentication not ignored. Then the stateful phase chains operations
through the links schemathesis infers (an id a response returns used by the next request).
"""

from __future__ import annotations

import json
import math
import os
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, ClassVar

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, transaction
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test
from rest_framework.utils.encoders import JSONEncoder
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig

from apps.accounts.devices import device_token_issue
from apps.common.clock import EARLIEST_CLIENT_TIME
from apps.common.throttling import throttle_history_clear
from apps.content.models import Question, QuestionKind
from apps.content.selectors import deck_cards_list, decks_list
from apps.quizzes.models import QuizAttempt
from apps.srs.settings.rules import time_zone_names
from tests.support.anki_packages import legacy_package

# Bounded so the whole file stays well under two minutes; derandomized so a failure repeats. A
# deeper run by hand: FUZZ_EXAMPLES=50 FUZZ_SCENARIOS=150 pytest tests/api/test_fuzz.py
EXAMPLES_PER_OPERATION = int(os.environ.get("FUZZ_EXAMPLES", "8"))
STATEFUL_SCENARIOS = int(os.environ.get("FUZZ_SCENARIOS", str(max(10, EXAMPLES_PER_OPERATION * 2))))

# These end the session the run signs in with (or the account itself), so every later request would
# be a 401; tests/accounts covers them. Signing a device out by its id ends this one when the id is
# the one a device list gave.
SESSION_ENDING_PATHS = [
    "/api/v1/auth/logout/",
    "/api/v1/auth/logout/everywhere/",
    "/api/v1/auth/devices/{device_id}/",
    "/api/v1/auth/password/change/",
    "/api/v1/me/delete/",
]

# The schema the API serves at /api/v1/schema/, generated the same way without a request.
_SPEC = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True), cls=JSONEncoder))
# A body over the size limit is refused before it is read, whatever else is wrong with it: 413 is a
# refusal too (a batch of more than 1,000 reviews is over the limit long before it is over maxItems).
_CONFIG = SchemathesisConfig.from_dict(
    {
        "checks": {
            "negative_data_rejection": {
                "expected-statuses": [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429]
            }
        }
    }
)
schema = schemathesis.openapi.from_dict(_SPEC, config=_CONFIG).exclude(path=SESSION_ENDING_PATHS)
schema.app = get_wsgi_application()


class _SignedIn:
    """The token of the test's learner, and the visible cards of each deck by slug, read from the database; fresh
    for each test, as the database is. Hooks read them from here: schemathesis also calls them while collecting,
    when the database is closed."""

    token = ""
    deck_cards: ClassVar[dict[str, int]] = {}


@schema.auth(refresh_interval=None)
class LearnerToken:
    """Credentials schemathesis knows for explicit ones: it then probes each operation without them and with
    wrong ones, which the ignored_auth check needs, and drops the credentials it would generate itself."""

    def get(self, case: schemathesis.Case, context: schemathesis.AuthContext) -> str:
        return _SignedIn.token

    def set(self, case: schemathesis.Case, data: str, context: schemathesis.AuthContext) -> None:
        case.headers["Authorization"] = f"Token {data}"


# `date-time` alone says nothing of the range the server takes (AwareDateTimeField: from 2000 to now
# plus the clock skew, in each field's description), so valid data would be refused for its year. A day
# inside each bound keeps every offset of the day inside them too.
_OFFSETS = [timezone(timedelta(minutes=minutes)) for minutes in (-720, -300, 0, 60, 330, 840)]
schemathesis.openapi.format(
    "date-time",
    st.datetimes(
        min_value=EARLIEST_CLIENT_TIME.replace(tzinfo=None) + timedelta(days=1),
        max_value=datetime.now(UTC).replace(tzinfo=None) - timedelta(days=1),
        timezones=st.sampled_from([UTC, *_OFFSETS]),
    ).map(lambda moment: moment.isoformat().replace("+00:00", "Z")),
)


def _valid_settings(body: dict[str, Any], path_parameters: dict[str, Any]) -> None:
    """Steps ascending, and relearning steps within maximum_interval_days, the stored ones too when the body
    changes only the maximum."""
    for name in ("learning_steps", "relearning_steps"):
        if isinstance(body.get(name), list):
            body[name] = sorted(body[name])
    steps = body.get("relearning_steps")
    if "relearning_steps" not in body and "maximum_interval_days" in body and _SignedIn.token:
        from apps.srs.models import SchedulingSettings

        steps = (
            SchedulingSettings.objects.filter(learner__username="ada")
            .values_list("relearning_steps", flat=True)
            .first()
        )
    if steps:
        days = math.ceil(max(steps) / 86_400)
        if not isinstance(body.get("maximum_interval_days"), int) or body["maximum_interval_days"] < days:
            body["maximum_interval_days"] = days


def _is_number(value: object) -> bool:
    # JSON Schema's integer takes 7.0 too, and so does the server; a bool is no number in JSON.
    return isinstance(value, int | float) and not isinstance(value, bool)


def _valid_pass(body: dict[str, Any], path_parameters: dict[str, Any]) -> None:
    """finished_at not before started_at, total at most the deck's visible cards, known at most total."""
    started, finished = body.get("started_at"), body.get("finished_at")
    if (
        isinstance(started, str)
        and isinstance(finished, str)
        and datetime.fromisoformat(finished) < datetime.fromisoformat(started)
    ):
        body["started_at"], body["finished_at"] = finished, started
    cards = _SignedIn.deck_cards.get(str(path_parameters.get("slug")))
    if cards is not None and _is_number(body.get("total")):
        body["total"] = min(body["total"], cards)
    if _is_number(body.get("known")) and _is_number(body.get("total")):
        body["known"] = min(body["known"], body["total"])


def _valid_profile(body: dict[str, Any], path_parameters: dict[str, Any]) -> None:
    """A learner listed on leaderboards has a display name that is not blank (the stored one counts too)."""
    name = body.get("display_name")
    if isinstance(name, str) and not name.strip():
        body["show_on_leaderboards"] = False
    elif body.get("show_on_leaderboards") is True and not isinstance(name, str):
        body["display_name"] = "Learner"


_ANSWER_FIELDS = ("choice", "choices", "text", "number")


def _valid_answer(body: dict[str, Any], path_parameters: dict[str, Any]) -> None:
    """One of the attempt's questions, answered in the one field its kind takes, by the attempt's choice ids."""
    if not _SignedIn.token:
        return  # collecting tests: no database yet, and no attempt to answer
    try:
        attempt = QuizAttempt.objects.filter(pk=int(path_parameters.get("attempt_id", ""))).first()
    except (TypeError, ValueError, OverflowError):
        return
    question_ids = attempt.shown_question_ids() if attempt is not None else []
    if attempt is None or not question_ids:
        return
    pick = len(str(body.get("question", "")))
    question = Question.objects.get(pk=question_ids[pick % len(question_ids)])
    drawn = {field: body.pop(field) for field in _ANSWER_FIELDS if field in body}
    body["question"] = question.slug
    choice_ids = attempt.choice_ids_of(question.pk)
    if question.kind == QuestionKind.SINGLE_CHOICE:
        body["choice"] = choice_ids[pick % len(choice_ids)]
    elif question.kind == QuestionKind.MULTIPLE_CHOICE:
        body["choices"] = choice_ids[: 1 + pick % len(choice_ids)]
    elif question.kind == QuestionKind.SHORT_TEXT:
        body["text"] = drawn["text"] if isinstance(drawn.get("text"), str) else "tf.data"
    else:
        body["number"] = drawn["number"] if _is_number(drawn.get("number")) else 0


# An Anki package the server reads; the schema can only say that the file is binary.
_ANKI_PACKAGE = legacy_package()


def _valid_anki_package(body: dict[str, Any], path_parameters: dict[str, Any]) -> None:
    body["package"] = _ANKI_PACKAGE


def _valid_credentials(body: dict[str, Any], path_parameters: dict[str, Any]) -> None:
    """Valid data for a sign-in is an account's own email (or username) and password: the learner's."""
    if "email" in body:
        body["email"] = "ada@example.com"
    if "username" in body:
        body["username"] = "ada"
    body["password"] = "correct horse battery"


def _valid_registration_link(body: dict[str, Any], path_parameters: dict[str, Any]) -> None:
    """Valid data for finishing a sign-up is a link's token: a sign-up waiting for it, of an address of its own."""
    if not _SignedIn.token:
        return  # collecting tests: no database yet
    from django.contrib.auth.hashers import make_password

    from apps.accounts.mail import registration_confirm_token
    from apps.accounts.models import PendingRegistration

    waiting = PendingRegistration.objects.create(
        email=f"fuzz-{uuid.uuid4().hex}@example.com",
        password_hash=make_password("a long enough passphrase"),
        display_name="Fuzz",
        timezone="UTC",
    )
    body["token"] = registration_confirm_token(waiting)


def _valid_reset_link(body: dict[str, Any], path_parameters: dict[str, Any]) -> None:
    """Valid data for a reset is a link's uid and token, and a new password the rules take: of an account of its
    own, so that resetting signs out nobody the run needs."""
    if not _SignedIn.token:
        return  # collecting tests: no database yet
    from django.contrib.auth import get_user_model
    from django.contrib.auth.tokens import default_token_generator
    from django.utils.encoding import force_bytes
    from django.utils.http import urlsafe_base64_encode

    name = f"fuzz-{uuid.uuid4().hex}"
    user = get_user_model().objects.create_user(username=name, email=f"{name}@example.com", password="an old password")
    body["uid"] = urlsafe_base64_encode(force_bytes(user.pk))
    body["token"] = default_token_generator.make_token(user)
    body["new_password"] = "lanterns over a frozen lake"


# Rules across fields, or against stored data, that JSON Schema cannot say (the fields' descriptions say them).
_CROSS_FIELD_RULES: dict[tuple[str, str], Callable[[dict[str, Any], dict[str, Any]], None]] = {
    ("PATCH", "/api/v1/srs/settings/"): _valid_settings,
    ("POST", "/api/v1/decks/{slug}/passes/"): _valid_pass,
    ("PATCH", "/api/v1/me/"): _valid_profile,
    ("POST", "/api/v1/quiz-attempts/{attempt_id}/answers/"): _valid_answer,
    ("POST", "/api/v1/anki-history/"): _valid_anki_package,
    ("POST", "/api/v1/auth/login/"): _valid_credentials,
    ("POST", "/api/v1/auth/token/"): _valid_credentials,
    ("POST", "/api/v1/auth/register/confirm/"): _valid_registration_link,
    ("POST", "/api/v1/auth/password/reset/confirm/"): _valid_reset_link,
}


_ZONES = sorted(time_zone_names())


def _known_zones(value: Any) -> None:
    """A time zone is a name the tz database holds; the schema gives only its shape (no enum, see SETTINGS_KEYWORDS)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "timezone" and isinstance(item, str) and item not in _ZONES:
                value[key] = _ZONES[sum(map(ord, item)) % len(_ZONES)]
            else:
                _known_zones(item)
    elif isinstance(value, list):
        for item in value:
            _known_zones(item)


@schema.hook
def map_case(context: schemathesis.HookContext, case: schemathesis.Case) -> schemathesis.Case:
    """Valid bodies also keep the rules JSON Schema cannot say; invalid ones are left as drawn."""
    body: Any = case.body
    positive = case.meta is None or case.meta.generation.mode == GenerationMode.POSITIVE
    if not positive or not isinstance(body, dict):
        return case
    _known_zones(body)
    rule = _CROSS_FIELD_RULES.get((case.operation.method.upper(), case.operation.path))
    if rule is not None:
        rule(body, dict(case.path_parameters or {}))
    return case


_SETTINGS = settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture(autouse=True)
def requests_share_the_test_transaction() -> Iterator[None]:
    # The WSGI handler would close the test's connection after each request; Django's test client
    # disconnects the same handlers.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def learner_token(learner, shipped_course) -> Iterator[str]:
    _SignedIn.token = device_token_issue(user=learner, device_name=None).key
    _SignedIn.deck_cards = {deck.slug: deck_cards_list(deck=deck).count() for deck in decks_list()}
    yield _SignedIn.token
    _SignedIn.token = ""
    _SignedIn.deck_cards = {}


@schema.parametrize()
@_SETTINGS
def test_every_operation_passes_every_check(case: schemathesis.Case, learner_token: str) -> None:
    case.call_and_validate()


class LearnerWorkflow(schema.as_state_machine()):  # type: ignore[misc]
    """Each scenario starts from the same data and request counts, so a scenario replayed while shrinking
    meets what it met the first time: rows and rate limits left by earlier ones would answer it otherwise."""

    def setup(self) -> None:
        self._savepoint = transaction.savepoint()
        throttle_history_clear()

    def teardown(self) -> None:
        transaction.savepoint_rollback(self._savepoint)


def test_chained_operations_pass_every_check(learner_token: str) -> None:
    run_state_machine_as_test(
        LearnerWorkflow,
        settings=settings(_SETTINGS, max_examples=STATEFUL_SCENARIOS, stateful_step_count=8),
    )


def test_only_the_session_ending_operations_are_left_out():
    # A renamed path would otherwise slip out of the exclusion, and its run would sign the learner out.
    assert set(SESSION_ENDING_PATHS) <= set(_SPEC["paths"])
    assert sum(len(operations) for operations in _SPEC["paths"].values()) - len(SESSION_ENDING_PATHS) == len(
        list(schema.get_all_operations())
    )


def test_each_operation_is_a_test_of_its_own(request: pytest.FixtureRequest) -> None:
    """Parallel runs schedule tests by node id: every operation's test needs its own, or only one would run."""
    fuzzed = [item.nodeid for item in request.session.items if item.name.startswith("test_every_operation_passes")]
    if not fuzzed:
        pytest.skip("the operation tests are not collected in this run")
    assert len(set(fuzzed)) == len(fuzzed) == len(list(schema.get_all_operations()))
