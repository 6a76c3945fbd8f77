#!/bin/sh
# Regenerates src/api/schema.ts from the schema the Django project serves. SCHEMA=path skips
# running Django and reads that file instead.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
schema=${SCHEMA:-}
if [ -z "$schema" ]; then
    schema="$root/var/openapi.yaml"
    mkdir -p "$root/var"
    # Integer bounds in the schema come from the database backend: the types are those of production's
    # PostgreSQL on every machine. Writing the schema never connects to that address.
    (cd "$root" && DJANGO_DEBUG=true DATABASE_URL=postgres://schema@127.0.0.1:1/schema \
        .venv/bin/python manage.py spectacular --file "$schema")
fi
"$here/node_modules/.bin/openapi-typescript" "$schema" -o "$here/src/api/schema.ts"
