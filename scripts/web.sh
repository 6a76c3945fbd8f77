#!/bin/sh
# The learner web app's client (apps/web/frontend), built with Node; `make run` and `make test` need
# none of this, because the built bundle is committed.
#   sh scripts/web.sh build   install the exact packages, regenerate the API types, build the bundle
#   sh scripts/web.sh check   the same from a clean install, then type-check and unit-test, and fail
#                             if the API types or the bundle differ from what is committed
set -eu

cd "$(dirname "$0")/.."
FRONTEND=apps/web/frontend

# The types come from the schema as the server serves it: an API change that breaks the client fails
# type-checking, and one that changes the types fails the comparison with what is committed.
api_types() {
    (cd "$FRONTEND" && npm run --silent gen:api)
}

case "${1:-}" in
build)
    (cd "$FRONTEND" && npm ci --no-audit --no-fund --loglevel=error)
    api_types
    (cd "$FRONTEND" && npm run --silent build)
    ;;
check)
    (cd "$FRONTEND" && rm -rf node_modules && npm ci --no-audit --no-fund --loglevel=error)
    api_types
    (cd "$FRONTEND" && npm run --silent typecheck && npm test --silent && npm run --silent build)
    changed=$(git status --porcelain -- "$FRONTEND/src/api" apps/web/static/web)
    if [ -n "$changed" ]; then
        echo "The committed API types or web bundle differ from what the sources build:" >&2
        echo "$changed" >&2
        git --no-pager diff --stat -- "$FRONTEND/src/api" apps/web/static/web >&2
        echo "Run 'sh scripts/web.sh build' and commit the result." >&2
        exit 1
    fi
    ;;
*)
    echo "usage: sh scripts/web.sh build|check" >&2
    exit 2
    ;;
esac
