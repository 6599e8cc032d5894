#!/usr/bin/env bash
# Every OpenAPI document we publish or serve is valid OpenAPI 3.1 (make test): docs/api/*.json
# (the documents by audience) and each service's whole document as it serves it at
# /openapi.json (written by `api-documents --served`). Validated by openapi-spec-validator,
# made for it and pinned below (a cached virtualenv, like the other checks' tools): it checks
# the document against the OpenAPI 3.1 schema and what the schema cannot say (a path
# parameter declared twice, or not declared, a $ref that names nothing).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO"

OPENAPI_SPEC_VALIDATOR_VERSION=0.7.2
venv=${XDG_CACHE_HOME:-$HOME/.cache}/loyalty-tools/openapi-venv
pinned_venv "$venv" "openapi-spec-validator==$OPENAPI_SPEC_VALIDATOR_VERSION"

served=$(mktemp -d)
trap 'rm -rf "$served"' EXIT
# Built as `make test` has just built the workspace (binaries and tests, one feature set):
# `cargo run -p api-documents`, or the binaries alone, would unify features otherwise and
# rebuild much of the dependency tree.
cargo build --quiet --locked --workspace --bins --tests
"${CARGO_TARGET_DIR:-target}/debug/api-documents" --served "$served" >/dev/null
# One run for every document (the validator takes several files).
"$venv/bin/openapi-spec-validator" --schema 3.1 docs/api/*.json "$served"/*.json ||
    fail "a document is not valid OpenAPI 3.1 (above: which, and why)"
