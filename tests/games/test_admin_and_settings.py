"""The admin pages open, boards are read-only, profiles obey the API's rule; bad settings fail the checks."""

from __future__ import annotations

import pytest
from django.core import checks
from django.urls import reverse

from apps.accounts.models import LearnerProfile
from apps.games.conf import match_settings_errors
from apps.games.models import MatchAttempt, MatchBoard
from tests.support.games import answers, attempt, new_board, wrong_pair

pytestmark = pytest.mark.django_db


@pytest.fixture
def played(learner, learner_client, cards, clock) -> str:
    board = new_board(learner_client, pairs=2)
    first, second = wrong_pair(board["id"])
    attempt(learner_client, board["id"], first.term_id, second.definition_id)
    pair = answers(board["id"])[0]
    attempt(learner_client, board["id"], pair.term_id, pair.definition_id)
    LearnerProfile.objects.create(learner=learner, display_name="Ada", show_on_leaderboards=True)
    return board["id"]


def test_every_admin_page_opens(staff_client, played):
    attempt_row = MatchAttempt.objects.first()
    profile = LearnerProfile.objects.get()
    for url in (
        reverse("admin:games_matchboard_changelist"),
        reverse("admin:games_matchboard_change", args=[played]),
        reverse("admin:games_matchattempt_changelist"),
        reverse("admin:games_matchattempt_change", args=[attempt_row.pk if attempt_row else 0]),
        reverse("admin:accounts_learnerprofile_changelist"),
        reverse("admin:accounts_learnerprofile_change", args=[profile.pk]),
        reverse("admin:accounts_learnerprofile_add"),
    ):
        assert staff_client.get(url).status_code == 200, url


def test_boards_and_attempts_are_read_only(staff_client, played):
    assert staff_client.get(reverse("admin:games_matchboard_add")).status_code == 403
    delete = staff_client.post(reverse("admin:games_matchboard_delete", args=[played]), {"post": "yes"})
    assert delete.status_code == 403
    change = staff_client.post(reverse("admin:games_matchboard_change", args=[played]), {"pairs": 12})
    assert change.status_code == 403
    assert MatchBoard.objects.get(pk=played).pairs == 2


def test_the_profile_admin_refuses_an_opt_in_without_a_name(staff_client, played, learner):
    profile = LearnerProfile.objects.get()
    url = reverse("admin:accounts_learnerprofile_change", args=[profile.pk])
    response = staff_client.post(url, {"learner": learner.pk, "display_name": " ", "show_on_leaderboards": "on"})
    assert response.status_code == 200  # the form again, with the error
    assert "Set a display name to appear on leaderboards." in response.content.decode()
    profile.refresh_from_db()
    assert profile.display_name == "Ada"


def test_the_default_settings_pass_the_checks():
    assert match_settings_errors() == []
    assert not [message for message in checks.run_checks() if message.id == "games.E001"]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MATCH_WRONG_ATTEMPT_PENALTY_SECONDS", -1),
        ("MATCH_WRONG_ATTEMPT_PENALTY_SECONDS", "5"),
        ("MATCH_BOARD_EXPIRY_MINUTES", 0),
        ("MATCH_RATINGS", {"first_try": 5}),
        ("MATCH_RATINGS", {"after_mistakes": 1}),
    ],
)
def test_bad_settings_fail_the_system_checks(settings, name, value):
    setattr(settings, name, value)
    errors = [message for message in checks.run_checks() if message.id == "games.E001"]
    assert len(errors) == 1 and name in errors[0].msg
