"""Abuse limits: request rates per learner and per client address, counted in the shared cache.

Rates live in REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] and are read on every request, so a change of
settings (in a test, say) applies at once. A view opts in with `throttle_scope` and the throttles it
lists: the scope "reviews" uses the rates "reviews_learner" and "reviews_ip". Scoped limits apply to
writes only, so reading (the study queue, a submission's progress) never uses up a learner's writes.

When the cache cannot be reached the request is let through and a warning logged: an outage of the
cache must not stop learners from studying, and the database still enforces every invariant.

With Redis as the cache, a throttle counts in one round trip: a script keeps DRF's sliding window (the
times of the requests counted, newest first) as a Redis list, and decides and records in one step. The
first of a view's throttles counts for the later ones too, so a request costs one round trip whatever
the number of its throttles. Other caches use DRF's own get and set.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache import cache as default_cache
from django.core.cache.backends.redis import RedisCache
from django.core.exceptions import ImproperlyConfigured
from redis.exceptions import NoScriptError
from rest_framework.permissions import SAFE_METHODS
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle

if TYPE_CHECKING:
    from django.http import HttpRequest
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

# DRF's SimpleRateThrottle.allow_request for each key: drop the times that have left the window from the
# end of the list, then refuse if it is full, or record now at its head. A refused request is not
# recorded. KEYS: one per window. ARGV: now (as Python's repr() writes it, which reads back as the same
# double), then for each key its limit and its duration in seconds. Each window answers {1, ""} when
# allowed, or {0, the time whose leaving makes room} when refused. A key of another type (as DRF's
# pickled list was) is replaced.
_COUNT_SCRIPT = """
local now = ARGV[1]
local answers = {}
for index, key in ipairs(KEYS) do
    local limit = tonumber(ARGV[2 * index])
    local duration = ARGV[2 * index + 1]
    local cutoff = tonumber(now) - tonumber(duration)
    local kind = redis.call('TYPE', key).ok
    if kind ~= 'list' and kind ~= 'none' then
        redis.call('DEL', key)
    end
    while true do
        local oldest = redis.call('LINDEX', key, -1)
        if not oldest or tonumber(oldest) > cutoff then
            break
        end
        redis.call('RPOP', key)
    end
    local counted = redis.call('LLEN', key)
    if counted < limit then
        redis.call('LPUSH', key, now)
        redis.call('EXPIRE', key, duration)
        answers[index] = {1, ''}
    elseif limit > 0 then
        answers[index] = {0, redis.call('LINDEX', key, limit - 1)}
    else
        answers[index] = {0, ''}
    end
end
return answers
"""
_COUNT_SCRIPT_SHA = hashlib.sha1(_COUNT_SCRIPT.encode(), usedforsecurity=False).hexdigest()
# Where the first throttle of a request leaves what it counted for the later ones.
_VERDICTS_ATTRIBUTE = "_throttle_verdicts"


@dataclass(frozen=True, slots=True)
class _Window:
    """One throttle's sliding window in Redis, for one request."""

    key: str  # as stored: with the cache's prefix and version
    num_requests: int
    duration: int


@dataclass(frozen=True, slots=True)
class _Verdict:
    allowed: bool
    # When counted: the time of the count; when refused, also the counted request whose leaving makes room.
    now: float | None = None
    frees_a_place_at: float | None = None


# Redis could not be asked: the request goes through.
_UNCOUNTED = _Verdict(allowed=True)


def _redis_cache(cache: Any) -> RedisCache | None:
    """The throttle's cache if it is Redis, resolving DRF's default (a proxy of the default cache)."""
    if cache is default_cache:
        cache = caches[DEFAULT_CACHE_ALIAS]
    return cache if isinstance(cache, RedisCache) else None


def _count_in_redis(cache: RedisCache, windows: list[_Window], now: float) -> list[_Verdict]:
    """Decides and records each window's request at time `now`, all in one round trip."""
    keys = [window.key for window in windows]
    arguments: list[str | int] = [repr(now)]
    for window in windows:
        arguments += [window.num_requests, window.duration]
    client: Any = cache._cache.get_client(write=True)
    try:
        answers = client.evalsha(_COUNT_SCRIPT_SHA, len(keys), *keys, *arguments)
    except NoScriptError:  # a restarted or flushed Redis: EVAL loads the script again
        answers = client.eval(_COUNT_SCRIPT, len(keys), *keys, *arguments)
    return [
        _Verdict(allowed=bool(allowed), now=now, frees_a_place_at=float(oldest) if oldest else None)
        for allowed, oldest in answers
    ]


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
        # Refused: the time of the counted request whose leaving the window makes room for one more.
        self.frees_a_place_at: float | None = None

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

    def applies_to(self, request: Request, view: APIView) -> bool:
        """Takes this request's scope and rate; False when this throttle does not count the request."""
        scope = self.scope_for(request, view)
        if scope is None:
            return False
        self.scope = scope
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        self.frees_a_place_at = None
        return True

    def allow_request(self, request: Request, view: APIView) -> bool:
        if not self.applies_to(request, view):
            return True
        cache = _redis_cache(self.cache)
        if cache is not None:
            return self._allow_by_redis(cache, request, view)
        try:
            allowed = bool(super().allow_request(request, view))
        except Exception:
            _outage_log(self.scope or "")
            return True
        if not allowed and self.num_requests is not None and 0 < self.num_requests <= len(self.history):
            # History is newest first; once this request ages out, the window holds num_requests - 1.
            self.frees_a_place_at = self.history[self.num_requests - 1]
        return allowed

    def _redis_window(self, cache: RedisCache, request: Request, view: APIView) -> _Window | None:
        """This request's window, once applies_to() has taken the rate; None when nothing is counted."""
        if self.num_requests is None or self.duration is None:
            return None
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return None
        return _Window(cache.make_and_validate_key(self.key), self.num_requests, self.duration)

    def _allow_by_redis(self, cache: RedisCache, request: Request, view: APIView) -> bool:
        window = self._redis_window(cache, request, view)
        if window is None:
            return True
        pending: dict[_Window, _Verdict] = vars(request).setdefault(_VERDICTS_ATTRIBUTE, {})
        verdict = pending.pop(window, None)
        if verdict is None:
            later = self._later_windows(cache, request, view, window)
            try:
                verdicts = _count_in_redis(cache, [window, *later], self.timer())
            except Exception:
                _outage_log(self.scope or "")
                # The later throttles let the request through without trying again.
                pending.update(dict.fromkeys(later, _UNCOUNTED))
                return True
            verdict = verdicts[0]
            pending.update(zip(later, verdicts[1:], strict=True))
        if verdict.now is None:
            return True
        self.now = verdict.now
        self.frees_a_place_at = verdict.frees_a_place_at
        return verdict.allowed

    def _later_windows(self, cache: RedisCache, request: Request, view: APIView, own: _Window) -> list[_Window]:
        """The windows of the view's throttles that DRF asks after this one, to be counted with it.

        DRF asks every throttle of the view, refused or not, each counting on its own; each later one
        finds its verdict on the request. Empty when this throttle is not one of the view's own."""
        if view is None:
            return []
        throttles = view.get_throttles()
        position = next((index for index, throttle in enumerate(throttles) if type(throttle) is type(self)), None)
        if position is None:
            return []
        windows: list[_Window] = []
        for throttle in throttles[position + 1 :]:
            if not isinstance(throttle, _RateThrottle) or throttle.cache is not self.cache:
                continue
            if not throttle.applies_to(request, view):
                continue
            window = throttle._redis_window(cache, request, view)
            # The same window twice is counted twice, as DRF would: by that throttle itself.
            if window is not None and window != own and window not in windows:
                windows.append(window)
        return windows

    def wait(self) -> float | None:
        """Seconds until one more request fits in the window, at least 1 (Retry-After is whole seconds)."""
        if self.num_requests is None or self.duration is None:
            return None
        if self.frees_a_place_at is None:
            return float(self.duration)
        return max(1.0, self.frees_a_place_at + self.duration - self.now)


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


class ReviewVolumeThrottle(BaseThrottle):
    """Reviews one learner uploads in batches, counted by how many each carries: rate "review_volume_learner".

    A batch of 1,000 reviews costs the server about a second of CPU and counts as one request for
    "reviews_learner"; counted here as 1,000, one learner's uploads cannot take the CPU that every
    other learner's requests share. Single reviews cost milliseconds and keep their one round trip
    to the cache: "reviews_learner" bounds them. Counted in a fixed window of the rate's period (a
    learner may send up to twice the rate across a window's edge), in the default cache, and let
    through when the cache is down. A request refused here is not counted.
    """

    scope = "review_volume_learner"
    _KEY = "throttle_review_volume:{learner}:{window}"
    # Set once a learner's window is full, until it ends: later requests are refused unread, so a
    # client that goes on sending uploads costs one cache read each, not the parsing of its body.
    _FULL_KEY = "throttle_review_volume_full:{learner}"

    def __init__(self) -> None:
        self.seconds_left: float | None = None

    def allow_request(self, request: Request, view: APIView) -> bool:
        if request.method in SAFE_METHODS or not request.user or not request.user.is_authenticated:
            return True
        limit, period = SimpleRateThrottle.parse_rate(None, api_settings.DEFAULT_THROTTLE_RATES[self.scope])  # type: ignore[arg-type]
        if limit is None or period is None:
            return True
        now = time.time()
        window = int(now // period)
        window_end = (window + 1) * period
        full_key = self._FULL_KEY.format(learner=request.user.pk)
        try:
            full_until = default_cache.get(full_key)
        except Exception:
            _outage_log(self.scope)
            return True
        if isinstance(full_until, int | float) and full_until > now:
            self.seconds_left = full_until - now
            return False
        # Outside the cache's try: a body that is not JSON is the client's 400, not an outage.
        carried = _reviews_carried(request)
        key = self._KEY.format(learner=request.user.pk, window=window)
        try:
            default_cache.add(key, 0, timeout=period * 2)
            counted = default_cache.incr(key, carried)
            if counted <= limit:
                return True
            default_cache.decr(key, carried)
            default_cache.set(full_key, window_end, timeout=max(1, math.ceil(window_end - now)))
        except Exception:
            _outage_log(self.scope)
            return True
        self.seconds_left = window_end - now
        return False

    def wait(self) -> float | None:
        return None if self.seconds_left is None else max(1.0, self.seconds_left)


def _reviews_carried(request: Request) -> int:
    """How many reviews a request records: the length of a batch's list, else one."""
    data = request.data
    reviews = data.get("reviews") if isinstance(data, dict) else None
    return max(1, len(reviews)) if isinstance(reviews, list) else 1


def client_address(request: Request | HttpRequest) -> str:
    """The client's address as every throttle counts it (REMOTE_ADDR, or per NUM_PROXIES the forwarded one)."""
    return str(BaseThrottle().get_ident(request))  # type: ignore[arg-type]


class InvalidTokenAddressThrottle(_RateThrottle):
    """Requests from one client address that sent an invalid API token: rate "bad_token_ip".

    Counted by the token authentication when it refuses a token, not by views: an address over the
    rate is answered 429 instead of 401, so that guessing tokens costs a script time, not the server."""

    scope = "bad_token_ip"

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
