"""Reading settings from the environment, one way for every setting.

A variable that is unset, empty or only blanks means "use the default" (an `.env` line `NAME=` or a
container's empty variable must not read as zero or as an empty path). A value that is there but
cannot be read as the setting's type stops the process at start with the variable's name."""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def env_raw(name: str) -> str | None:
    """The variable's value without surrounding blanks; None when it is unset or blank."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return None
    return raw.strip()


def env_str(name: str, default: str) -> str:
    raw = env_raw(name)
    return default if raw is None else raw


def env_int(name: str, default: int) -> int:
    raw = env_raw(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number.") from None


def env_float(name: str, default: float) -> float:
    raw = env_raw(name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number.") from None


def env_bool(name: str, default: bool) -> bool:
    raw = env_raw(name)
    if raw is None:
        return default
    if raw.lower() in _TRUE:
        return True
    if raw.lower() in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean; use true or false.")


def env_list(name: str, default: list[str]) -> list[str]:
    """A comma-separated list; blank items are dropped."""
    raw = env_raw(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_path(name: str, default: Path) -> Path:
    raw = env_raw(name)
    return default if raw is None else Path(raw)
