"""Django's Redis cache with one client object per connection pool, made once and reused by every operation.

Django's RedisCacheClient makes a new redis.Redis for each operation, and its constructor costs about as
much as a round trip to a Redis on the same machine. A redis.Redis over a ConnectionPool keeps no
connection of its own (it takes one from the pool per command), so one per pool serves every caller,
threads included. After a fork the pool sees the process id change and opens new connections in the
child, so a client made before a web server or Celery forks stays safe to use on both sides.

Everything else is Django's: the pools, their options (timeouts, retries) and the serializer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis import Redis

if TYPE_CHECKING:
    from redis import ConnectionPool


class ReusedClientRedisCacheClient(RedisCacheClient):
    """Django's RedisCacheClient whose get_client() returns the same redis.Redis for the same pool."""

    if TYPE_CHECKING:
        # Django's own, chooses the server (the first to write, another to read) and makes its pool once.
        def _get_connection_pool(self, write: bool) -> ConnectionPool: ...

    def __init__(self, servers: list[str], **options: Any) -> None:
        super().__init__(servers, **options)
        # By id() of the pool, which Django keeps for the life of this object.
        self._clients: dict[int, Redis] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Redis:
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            # Two threads may both get here; setdefault keeps one client, and either would do.
            client = self._clients.setdefault(id(pool), Redis(connection_pool=pool))
        return client


class ReusedClientRedisCache(RedisCache):
    """The Redis cache backend of CACHES, reusing its client objects (see ReusedClientRedisCacheClient)."""

    def __init__(self, server: str | list[str], params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient
