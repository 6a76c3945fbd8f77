"""Abuse limits: request rates per learner and per client address, counted in the shared cache.

Rates live in REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] and are read on every request, so a change of
settings (in a test, say) applies at once. A view opts in with `throttle_scope` and the throttles it
lists: the scope "reviews" uses the rates "reviews_learner" and "reviews_ip". Scoped limits apply to
writes only, so reading (the study queue, a submission's progress) never uses up a learner's writes.

When the cache cannot be reached the request is let through and a warning logged: an outage of the
cache must not stop learners from studying, and the database still enforces every invariant.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.redis import RedisCache
from django.core.exceptions import ImproperlyConfigured
from rest_framework.permissions import SAFE_METHODS
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle

if TYPE_CHECKING:
    from rest_framework.request import Request
    from rest_framework.views import APIView

logger = logging.getLogger(__name__)

# During a cache outage every request would log the same traceback; once a minute per process says it.
_OUTAGE_LOG_SECONDS = 60.0
_outage_logged_at: float | None = None


def _outage_log(scope: str) -> None:
    global _outage_logged_at
    now = time.monotonic()
    if _outage_logged_at is not None and now - _outage_logged_at < _OUTAGE_LOG_SECONDS:
        return
    _outage_logged_at = now
    logger.warning(
        "Throttle %s could not use the cache; requests are let through (logged once a minute while it lasts).",
        scope,
        exc_info=True,
    )


# Every throttle's history key starts so (DRF's own cache_format, also used by its ScopedRateThrottle).
THROTTLE_KEY_PATTERN = "throttle_*"


class _RateThrottle(SimpleRateThrottle):
    """DRF's sliding-window throttle with the rate read at request time and a cache outage tolerated."""

    scope: str | None = None
    # Set by allow_request, before DRF's own bookkeeping needs them.
    num_requests: int | None
    duration: int | None

    def __init__(self) -> None:
        # DRF resolves the rate here; subclasses that derive the scope from the view do it per request.
        self.rate: str | None = None
        self.num_requests, self.duration = None, None

    def get_rate(self) -> str | None:
        # DRF reads its class attribute THROTTLE_RATES, frozen at import; the settings are live.
        rates: dict[str, Any] = api_settings.DEFAULT_THROTTLE_RATES
        try:
            rate: str | None = rates[self.scope or ""]
            return rate
        except KeyError:
            raise ImproperlyConfigured(
                f"No throttle rate for the scope {self.scope!r}: add it to REST_FRAMEWORK['DEFAULT_THROTTLE_RATES']."
            ) from None

    def scope_for(self, request: Request, view: APIView) -> str | None:
        """The rate's name for this request, or None when this throttle does not apply to it."""
        return self.scope

    def allow_request(self, request: Request, view: APIView) -> bool:
        scope = self.scope_for(request, view)
        if scope is None:
            return True
        self.scope = scope
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        try:
            return bool(super().allow_request(request, view))
        except Exception:
            _outage_log(scope)
            return True

    def wait(self) -> float | None:
        """Seconds until one more request fits in the window, at least 1 (Retry-After is whole seconds)."""
        if self.num_requests is None or self.duration is None:
            return None
        if self.num_requests <= 0 or len(self.history) < self.num_requests:
            return float(self.duration)
        # History is newest first; once this request ages out, the window holds num_requests - 1.
        frees_a_place = self.history[self.num_requests - 1]
        return max(1.0, frees_a_place + self.duration - self.now)


class LearnerRateThrottle(_RateThrottle):
    """Every request of a signed-in learner, by rate "learner"; the default throttle of every view.

    Anonymous requests are not counted here: the only ones that reach a view are signing in and the
    health check, and signing in has its own per-address rate."""

    scope = "learner"

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        if not request.user or not request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class _ScopedWriteThrottle(_RateThrottle):
    """A view's `throttle_scope` rate for its unsafe methods, under the rate name "<scope>_<suffix>"."""

    suffix = ""

    def scope_for(self, request: Request, view: APIView) -> str | None:
        view_scope = getattr(view, "throttle_scope", None)
        if request.method in SAFE_METHODS or not view_scope:
            return None
        return f"{view_scope}_{self.suffix}"


class ScopedLearnerRateThrottle(_ScopedWriteThrottle):
    """Writes to the view's scope by one learner: rate "<scope>_learner"."""

    suffix = "learner"

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        if not request.user or not request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class ScopedAddressRateThrottle(_ScopedWriteThrottle):
    """Writes to the view's scope from one client address, whoever is signed in: rate "<scope>_ip".

    The address is REMOTE_ADDR, or with REST_FRAMEWORK["NUM_PROXIES"] = n > 0 the n-th address from
    the right of X-Forwarded-For (DRF's get_ident): only trusted proxies may name the client."""

    suffix = "ip"

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


def throttle_may_refuse(view: APIView, method: str) -> bool:
    """Whether a request with this method to this view can be answered 429, for the API schema."""
    for throttle in view.get_throttles():
        if isinstance(throttle, _ScopedWriteThrottle):
            if method.upper() not in SAFE_METHODS and getattr(view, "throttle_scope", None):
                return True
        elif isinstance(throttle, LearnerRateThrottle):
            if view.authentication_classes:
                return True
        elif isinstance(throttle, BaseThrottle):
            return True
    return False


def throttle_history_clear() -> int | None:
    """Forget every throttle's counted requests, so every client starts afresh; the keys removed.

    With Redis only the throttles' keys go: the cache may share its database with the Celery broker
    and results, which cache.clear() (FLUSHDB) would wipe too. Other backends are local to the
    machine and are cleared whole (None: the count is unknown)."""
    cache: Any = caches[DEFAULT_CACHE_ALIAS]  # DRF's throttles count in the default cache
    if isinstance(cache, RedisCache):
        client = cache._cache.get_client(write=True)
        keys = list(client.scan_iter(match=cache.make_key(THROTTLE_KEY_PATTERN), count=1000))
        if keys:
            client.delete(*keys)
        return len(keys)
    cache.clear()
    return None
