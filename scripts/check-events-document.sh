#!/usr/bin/env bash
# The events document is valid AsyncAPI 3, and the events the services really sent match
# it (make test, after the tests): scripts/events-document/validate.mjs with its pinned
# packages (the AsyncAPI parser, Ajv; npm ci into a cache, redone only when package-lock.json
# changes). The events are those the point and order services' events tests received from
# NATS and recorded in EVENT_SAMPLES_DIR (default target/tmp/event-samples, a directory per
# test, where they write them: testkit::nats::record_samples).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO"

samples=${EVENT_SAMPLES_DIR:-${CARGO_TARGET_DIR:-target}/tmp/event-samples}
tools=${XDG_CACHE_HOME:-$HOME/.cache}/loyalty-tools/events-document
src=scripts/events-document
pinned_node_modules "$tools" "$src"
cp "$src/validate.mjs" "$tools/validate.mjs"
node "$tools/validate.mjs" docs/api/events.yaml "$samples" ||
    fail "docs/api/events.yaml, or an event the tests received, is not valid (above: which, and why)"
