"""The learner web app's shell: served at every client route and nowhere else, with its own CSP."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.urls import resolve

from apps.accounts.mail import password_reset_url
from apps.reminders.services import DeckDue, Reminder, reminder_message
from apps.web.routes import ROUTES

pytestmark = pytest.mark.django_db

SCRIPT_TAG = '<script type="module" src="/static/web/app.js"></script>'
EXPECTED_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; font-src 'self'; "
    "connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'"
)
FRONTEND_URL = "https://study.example.org"

# One address per route; a route added to apps.web.routes without one here fails the first test.
SAMPLE_PATHS = {
    "home": "/",
    "signin": "/signin",
    "signup": "/signup/",
    "forgot-password": "/forgot-password",
    "reset-password": "/reset-password?uid=MQ&token=abc-123",
    "confirm-email": "/confirm-email?token=MQ:1vX:abc",
    "settings": "/settings/",
    "progress": "/progress",
    "study": "/study",
    "lesson": "/lessons/tf-data-pipelines/",
    "deck-study": "/decks/tf-data-pipelines/study",
    "deck-match": "/decks/tf-data-pipelines/match/",
    "quiz": "/quizzes/pipelines-quiz",
    "quiz-attempt": "/quiz-attempts/0f8fad5b-d9cb-469f-a165-70867728950e/",
    "exercise": "/exercises/first-pipeline",
    "constellation": "/courses/tensorflow-ai-phd/constellation/",
    "explorer": "/explorer/input-pipeline",
    "card-browser": "/courses/tensorflow-ai-phd/cards/?q=shuffle&state=due",
    "card": "/cards/42",
    "unsubscribed": "/unsubscribed",
}


def test_every_route_has_a_sample_address():
    assert sorted(SAMPLE_PATHS) == sorted(route.name for route in ROUTES)
    assert len({route.name for route in ROUTES}) == len(ROUTES)


@pytest.mark.parametrize(("name", "path"), SAMPLE_PATHS.items())
def test_every_route_serves_the_shell_without_a_query(client, django_assert_num_queries, name, path):
    with django_assert_num_queries(0):
        response = client.get(path)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert SCRIPT_TAG in response.content.decode()
    assert resolve(urlsplit(path).path).view_name == f"web:{name}"


@pytest.mark.parametrize("path", ["/", "/study/", "/lessons/tf-data-pipelines"])
def test_both_with_and_without_the_trailing_slash(client, path):
    other = path.rstrip("/") if path.endswith("/") and path != "/" else f"{path}/"
    assert client.get(path).status_code == 200
    assert client.get(other).status_code == 200


def test_the_shell_page_is_complete_and_has_no_inline_script_or_style(client):
    html = client.get("/").content.decode()
    assert html.startswith("<!doctype html>")
    assert '<html lang="en">' in html
    assert '<meta charset="utf-8">' in html
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    assert '<meta name="color-scheme" content="light dark">' in html
    assert "<title>Quizsite</title>" in html
    assert '<link rel="stylesheet" href="/static/web/app.css">' in html
    head = html.split("</head>")[0]
    # The chosen light or dark theme is applied by a classic script before the style sheet, so the
    # first paint already has it.
    theme_script = '<script src="/static/web/theme.js"></script>'
    assert head.index(theme_script) < head.index('<link rel="stylesheet"')
    assert SCRIPT_TAG in head
    assert re.search(r'<body><div id="app"></div><noscript>.*JavaScript.*</noscript></body>', html, re.S)
    assert '<a href="/api/v1/docs/">' in html
    # Every script has a src, no style element or attribute, no event handler attribute.
    assert [tag for tag in re.findall(r"<script\b[^>]*>", html) if " src=" not in tag] == []
    assert not re.search(r"<style\b|\sstyle=|\son\w+=", html, re.I)


def test_head_answers_like_get_without_a_body(client):
    response = client.head("/decks/tf-data-pipelines/study/")
    assert response.status_code == 200
    assert response.content == b""
    assert response["Content-Security-Policy"] == EXPECTED_CSP


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_other_methods_are_not_allowed(client, method):
    response = getattr(client, method)("/study/")
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"


def test_the_shell_has_its_content_security_policy_and_is_revalidated(client):
    response = client.get("/progress")
    policy = response["Content-Security-Policy"]
    assert policy == EXPECTED_CSP
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "Content-Security-Policy-Report-Only" not in response
    assert response["Cache-Control"] == "no-cache"


@pytest.mark.parametrize("path", ["/nope/", "/nope", "/decks/x/unknown", "/decks/x/study/extra/", "/lessons/"])
def test_other_paths_are_still_not_found(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert "Content-Security-Policy" not in response
    # A browser asking for a page there gets the app, which says so in its own frame; still a 404.
    page = client.get(path, HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert page.status_code == 404
    assert page["Content-Security-Policy"] == EXPECTED_CSP
    assert page.content == client.get("/progress").content


@pytest.mark.parametrize("path", ["/api/v1/unknown/", "/admin/nope/", "/static/nope.js"])
def test_a_browser_asking_for_what_is_not_the_apps_gets_the_json_404(client, staff_user, path):
    client.force_login(staff_user)
    response = client.get(path, HTTP_ACCEPT="text/html")
    assert response.status_code == 404
    assert "Content-Security-Policy" not in response


def test_unknown_api_paths_keep_the_api_json_404(client):
    response = client.get("/api/v1/unknown/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert "Content-Security-Policy" not in response


@pytest.mark.parametrize("path", ["/admin/login/", "/api/v1/courses/", "/api/v1/docs/", "/healthz"])
def test_other_pages_get_no_content_security_policy(client, learner, path):
    client.force_login(learner)
    response = client.get(path)
    assert response.status_code in {200, 503}
    assert "Content-Security-Policy" not in response
    assert "Content-Security-Policy-Report-Only" not in response


def test_the_password_reset_link_lands_on_the_app(client, learner, settings):
    settings.FRONTEND_URL = FRONTEND_URL
    link = password_reset_url(learner)
    assert link.startswith(f"{FRONTEND_URL}/reset-password?")
    parts = urlsplit(link)
    assert resolve(parts.path).view_name == "web:reset-password"
    response = client.get(f"{parts.path}?{parts.query}")
    assert response.status_code == 200 and SCRIPT_TAG in response.content.decode()


def test_the_reminder_links_land_on_the_app(client, settings):
    settings.FRONTEND_URL = FRONTEND_URL
    reminder = Reminder(
        learner_id=7,
        email="ada@example.com",
        name="Ada",
        local_date=date(2026, 6, 10),
        decks=[DeckDue(slug="tf-data-pipelines", title="Pipelines", cards=4)],
        streak=2,
    )
    message = reminder_message(reminder)
    [(html, _)] = message.alternatives
    for text in (str(message.body), str(html)):
        links = re.findall(rf"{re.escape(FRONTEND_URL)}[^\s\"<)]*", text)
        views = sorted({resolve(urlsplit(link).path).view_name for link in links})
        assert views == ["web:deck-study", "web:study"]
        for link in links:
            assert client.get(urlsplit(link).path).status_code == 200


def test_the_unsubscribe_page_links_back_to_the_app(client, settings):
    settings.FRONTEND_URL = FRONTEND_URL
    html = client.get("/email/unsubscribe/anything/").content.decode()
    assert f'<a href="{FRONTEND_URL}/">' in html
    assert resolve(urlsplit(f"{FRONTEND_URL}/").path).view_name == "web:home"


def test_a_csrf_checking_client_is_refused_before_the_view_on_post():
    # A cross-site form post never reaches the shell: CSRF refuses it first, as everywhere else.
    response = Client(enforce_csrf_checks=True).post("/study/")
    assert response.status_code == 403


def test_the_shell_never_sets_a_cookie(client):
    response = client.get("/")
    assert response.cookies == {}


def test_the_service_worker_is_served_at_the_root_and_keeps_only_files_that_exist(client):
    response = client.get("/sw.js")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert "no-cache" in response["Cache-Control"]
    body = response.content.decode()
    listed = re.search(r"const ASSETS = (\[.*?\]);", body)
    assert listed is not None
    assets = json.loads(listed.group(1))
    static_web = Path(__file__).resolve().parents[2] / "apps" / "web" / "static" / "web"
    assert "/static/web/app.js" in assets and any("/chunks/" in asset for asset in assets)
    assert all((static_web / asset.removeprefix("/static/web/")).is_file() for asset in assets)
    # Every chunk the bundle has is kept, so no page needs the network to start.
    chunks = {f"/static/web/chunks/{path.name}" for path in (static_web / "chunks").iterdir()}
    assert chunks <= set(assets)
    assert re.search(r'const VERSION = "[0-9a-f]{16}";', body)
