"""An address the API does not have is a 404 in the error shape, whatever the method and whoever asks."""

from __future__ import annotations

import pytest
from django.test import Client

METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("path", ["/api/v1/no-such-thing/", "/api/v1/reviews/7/nope/", "/api/v2/reviews/", "/api/"])
def test_an_unknown_api_path_is_not_found_for_every_method(method, path, db):
    # Browsers' CSRF rules must not turn "nothing is here" into "you may not".
    client = Client(enforce_csrf_checks=True)
    response = client.generic(method, path, data="{}", content_type="application/json")
    assert response.status_code == 404, response.content
    assert response.json()["error"]["code"] == "not_found"


def test_an_unknown_api_path_is_not_found_for_a_signed_in_browser(learner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(learner)
    response = client.post("/api/v1/no-such-thing/", data="{}", content_type="application/json")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
