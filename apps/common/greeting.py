"""How every mail to a learner greets them: one rule for account email and reminders alike."""

from __future__ import annotations


def greeting_name(*, display_name: str | None, username: str) -> str:
    """The display name they chose, else a username that is not an email address, else empty ("Hello,").

    A learner with no profile or a blank display name never chose a name; their address, whole or in
    part, is not a name, and a mail that greets them by it reads like a machine's."""
    chosen = (display_name or "").strip()
    if chosen:
        return chosen
    return "" if "@" in username else username.strip()
