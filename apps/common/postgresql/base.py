"""Django's PostgreSQL backend, with a connection health check that costs no round trip.

With CONN_HEALTH_CHECKS, Django checks a reused connection at the start of each request by sending
`SELECT 1`: a round trip, and a statement for the server to run, on every request. A connection
that is idle between requests has nothing to read; once the server ends it (a restart, an idle
timeout, pg_terminate_backend) the socket turns readable, with the server's farewell or the end of
the stream. So the check polls the socket without waiting: readable, or closed, and the connection
is replaced before the request uses it, as Django's own check would replace it.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed:
            return False
        try:
            poller = select.poll()
            poller.register(connection.fileno(), select.POLLIN | select.POLLPRI)
            # Anything to read on a connection between requests means the server has let it go.
            return not poller.poll(0)
        except (OSError, ValueError):
            return False
