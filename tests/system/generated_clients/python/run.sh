#!/usr/bin/env bash
# Generates two Python clients with a real generator (openapi-python-client, pinned below):
# `app_client` from the app's document and `admin_client` from the admin panel's, and runs
# journey.py through them against a running stack. The journey checks at run time that every
# answer is the generated model the contract promises, so a document that leaves an answer
# untyped, a closed set as free text or an always-present key optional fails here, the way
# an app team would find out. Before the journey, `mypy --strict` reads typed_bodies.py
# against the admin client: a body the server refuses must be a type error there.
#
# Reads:
#   APP_DOCUMENT, ADMIN_DOCUMENT   the documents (default docs/api/app.json and
#                                  docs/api/admin.json in the repository)
#   AUTH_URL ORDER_URL OPERATOR_URL SANDBOX_URL   the running services' base URLs
#   OPERATOR_TOKEN                 an operator token with the admin role
#   SUPER_ADMIN_TOKEN              one with the super_admin role (gift-code batches)
#   API_CLIENTS_DIR                where the cached virtualenv and the clients go (default
#                                  target/api-clients in the repository)
#   PYTHON                         the interpreter that makes the virtualenv (default python3)
# A generator warning (a piece of a document it cannot type) fails the run; the journey still
# runs when the clients were written, so that one run lists every failing check.
set -euo pipefail
LOG_NAME=python-client # read by lib.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/../../../../scripts/lib.sh"

GENERATOR_VERSION=0.29.1
# Type-checks typed_bodies.py against the generated admin client.
MYPY_VERSION=1.13.0
app_document=$(realpath -m "${APP_DOCUMENT:-$REPO/docs/api/app.json}")
admin_document=$(realpath -m "${ADMIN_DOCUMENT:-$REPO/docs/api/admin.json}")
dir=$(realpath -m "${API_CLIENTS_DIR:-$REPO/target/api-clients}")/python
: "${AUTH_URL:?}" "${ORDER_URL:?}" "${OPERATOR_URL:?}" "${SANDBOX_URL:?}" "${OPERATOR_TOKEN:?}"
: "${SUPER_ADMIN_TOKEN:?}"

# lib.sh's stamp and lock make the virtualenv once per pin and Python version.
venv=$dir/venv
pinned_venv "$venv" "openapi-python-client==$GENERATOR_VERSION" "mypy==$MYPY_VERSION"

run=$(mktemp -d "$dir/run.XXXXXX")
trap 'rm -rf "$run"' EXIT
warned=0
generate() {
    local package=$1 document=$2 out
    [ -f "$document" ] || fail "no document at $document"
    # No post hooks: the formatter they call (ruff) is not in the virtualenv and changes nothing
    # the journey reads.
    printf 'package_name_override: %s\npost_hooks: []\n' "$package" >"$run/$package.yaml"
    out=$("$venv/bin/openapi-python-client" generate --path "$document" --meta none \
        --output-path "$run/clients/$package" --config "$run/$package.yaml" 2>&1) || {
        echo "$out" >&2
        fail "$document does not generate"
    }
    if grep -q "Warning" <<<"$out"; then
        log "$document does not generate cleanly:"
        echo "$out" >&2
        warned=1
    fi
}
generate app_client "$app_document"
generate admin_client "$admin_document"

status=0
# The bodies a client author writes, as the type checker sees them (typed_bodies.py says how).
(cd "$run/clients" && MYPYPATH="$run/clients" "$venv/bin/mypy" --strict --warn-unused-ignores \
    --no-incremental --cache-dir=/dev/null "$here/typed_bodies.py") || {
    log "typed_bodies.py: the admin client's types and what the server accepts disagree (above)"
    status=1
}
PYTHONPATH="$run/clients" "$venv/bin/python" "$here/journey.py" || status=$?
[ "$warned" = 0 ] || fail "the generator warned (above)"
exit "$status"
