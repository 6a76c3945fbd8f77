"""Property-based fuzzing of the whole API from its own OpenAPI schema, signed in as a learner.

Every operation gets generated requests, valid and invalid; none may answer 5xx, and every response
must match what the schema says about it (status code, content type, body).
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
from rest_framework.authtoken.models import Token
from rest_framework.utils.encoders import JSONEncoder

# Bounded so the whole run stays under a minute; derandomized so a failure repeats. A deeper run by
# hand: FUZZ_EXAMPLES=200 pytest tests/api/test_fuzz.py
EXAMPLES_PER_OPERATION = int(os.environ.get("FUZZ_EXAMPLES", "8"))

# What the responses must be. Not checked: that every request outside the schema is refused (unknown
# query parameters and body fields are ignored, as HTTP APIs do) and that every request inside it is
# accepted (rules across fields and rows, such as "exactly one of choice, choices, text or number",
# are the services' and cannot be written in the schema).
RESPONSE_CHECKS = [
    schemathesis.checks.not_a_server_error,
    schemathesis.checks.status_code_conformance,
    schemathesis.checks.content_type_conformance,
    schemathesis.checks.response_headers_conformance,
    schemathesis.checks.response_schema_conformance,
]

# The schema the API serves at /api/v1/schema/, generated the same way without a request.
_SPEC = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True), cls=JSONEncoder))
schema = schemathesis.openapi.from_dict(_SPEC)
schema.app = get_wsgi_application()


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
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_server_errors_and_responses_match_the_schema(case, learner_token):
    case.call_and_validate(headers={"Authorization": f"Token {learner_token}"}, checks=RESPONSE_CHECKS)
