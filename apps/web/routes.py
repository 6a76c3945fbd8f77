"""The learner web app's client routes: the one list the server serves the shell at and links point to.

Each is a regular expression on the path without its leading slash. A path that matches none is not
the app's, and answers 404 as before; the app itself draws the page for each name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ClientRoute:
    name: str
    pattern: str


ROUTES: tuple[ClientRoute, ...] = (
    ClientRoute("home", r"^$"),
    ClientRoute("signin", r"^signin/?$"),
    ClientRoute("signup", r"^signup/?$"),
    ClientRoute("forgot-password", r"^forgot-password/?$"),
    # Password reset emails link here with ?uid=...&token=... (apps.accounts.services.password_reset_url).
    ClientRoute("reset-password", r"^reset-password/?$"),
    # Sign-up emails link here with ?token=... (apps.accounts.mail).
    ClientRoute("confirm-email", r"^confirm-email/?$"),
    ClientRoute("settings", r"^settings/?$"),
    ClientRoute("progress", r"^progress/?$"),
    # Review reminder emails link here and to deck-study (apps.reminders.services.reminder_message).
    ClientRoute("study", r"^study/?$"),
    ClientRoute("lesson", r"^lessons/(?P<slug>[-\w]+)/?$"),
    ClientRoute("deck-study", r"^decks/(?P<slug>[-\w]+)/study/?$"),
    ClientRoute("deck-match", r"^decks/(?P<slug>[-\w]+)/match/?$"),
    ClientRoute("quiz", r"^quizzes/(?P<slug>[-\w]+)/?$"),
    ClientRoute("quiz-attempt", r"^quiz-attempts/(?P<attempt_id>[-\w]+)/?$"),
    ClientRoute("exercise", r"^exercises/(?P<slug>[-\w]+)/?$"),
    ClientRoute("constellation", r"^courses/(?P<slug>[-\w]+)/constellation/?$"),
    ClientRoute("card-browser", r"^courses/(?P<slug>[-\w]+)/cards/?$"),
    ClientRoute("card", r"^cards/(?P<id>[-\w]+)/?$"),
    ClientRoute("explorer", r"^explorer/(?P<slug>[-\w]+)/?$"),
    ClientRoute("unsubscribed", r"^unsubscribed/?$"),
)
