"""A clock the tests set by hand, for throttles' sliding windows."""

from __future__ import annotations


class FakeClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
