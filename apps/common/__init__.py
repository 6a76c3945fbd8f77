"""Cross-cutting pieces: the error shape, pagination, OpenAPI defaults and health checks."""
