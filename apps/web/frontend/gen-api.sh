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
    (cd "$root" && DJANGO_DEBUG=true .venv/bin/python manage.py spectacular --file "$schema")
fi
"$here/node_modules/.bin/openapi-typescript" "$schema" -o "$here/src/api/schema.ts"
