"""Property-based fuzzing of the whole API from its own OpenAPI schema, signed in as a learner.

Every operation gets generated requests, valid and invalid, with every check schemathesis has: no 5xx,
every response as the schema says (status, content type, headers, body), invalid requests refused
and valid ones accepted, authentication not ignored. Then the stateful phase chains operations
through the links schemathesis infers (an id a response returns used by the next request).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test
from rest_framework.authtoken.models import Token
from rest_framework.utils.encoders import JSONEncoder

# Bounded so the whole file stays well under two minutes; derandomized so a failure repeats. A
# deeper run by hand: FUZZ_EXAMPLES=200 pytest tests/api/test_fuzz.py
EXAMPLES_PER_OPERATION = int(os.environ.get("FUZZ_EXAMPLES", "8"))
STATEFUL_SCENARIOS = int(os.environ.get("FUZZ_SCENARIOS", str(max(10, EXAMPLES_PER_OPERATION * 2))))

# These end the session the run signs in with (or the account itself), so every later request would
# be a 401; tests/accounts covers them.
SESSION_ENDING_PATHS = ["/api/v1/auth/logout/", "/api/v1/auth/password/change/", "/api/v1/me/delete/"]

# The schema the API serves at /api/v1/schema/, generated the same way without a request.
_SPEC = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True), cls=JSONEncoder))
schema = schemathesis.openapi.from_dict(_SPEC).exclude(path=SESSION_ENDING_PATHS)
schema.app = get_wsgi_application()

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
def learner_token(learner, shipped_course) -> str:
    return Token.objects.create(user=learner).key


@schema.parametrize()
@_SETTINGS
def test_every_operation_passes_every_check(case, learner_token):
    case.call_and_validate(headers={"Authorization": f"Token {learner_token}"})


def test_chained_operations_pass_every_check(learner_token):
    class SignedInWorkflow(schema.as_state_machine()):  # type: ignore[misc]
        def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, object]:
            return {"headers": {"Authorization": f"Token {learner_token}"}}

    run_state_machine_as_test(
        SignedInWorkflow, settings=settings(_SETTINGS, max_examples=STATEFUL_SCENARIOS, stateful_step_count=8)
    )


def test_only_the_session_ending_operations_are_left_out():
    # A renamed path would otherwise slip out of the exclusion, and its run would sign the learner out.
    assert set(SESSION_ENDING_PATHS) <= set(_SPEC["paths"])
    assert sum(len(operations) for operations in _SPEC["paths"].values()) - len(SESSION_ENDING_PATHS) == len(
        list(schema.get_all_operations())
    )
