#!/usr/bin/env bash
# Generates TypeScript types from the app and admin OpenAPI documents with openapi-typescript and
# type-checks journey.ts (the app's and the admin panel's whole journey, written with
# openapi-fetch) against them with tsc. Nothing runs against a stack: the point is that a
# document which leaves an answer untyped, marks an always-present key optional, types a closed
# set as a free string or an integer id as a string fails to compile, so the documents stay
# exact for the app's TypeScript developers.
#
# Reads (all optional):
#   APP_DOCUMENT      the app document (default <repo>/docs/api/app.json)
#   ADMIN_DOCUMENT    the admin document (default <repo>/docs/api/admin.json)
#   API_CLIENTS_DIR   cache of generator installs (default <repo>/target/api-clients); the pinned
#                     packages go to its typescript/ folder, kept between runs
#
# Exits 1, with the messages shown, on any openapi-typescript warning or tsc error. Needs Node 20
# and npm; the first run (and a run after package-lock.json changes) reaches the npm registry.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../../.." && pwd)

absolute() {
    [ -f "$1" ] || { echo "no such document: $1" >&2; exit 1; }
    echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
}
app_document=$(absolute "${APP_DOCUMENT:-$repo/docs/api/app.json}")
admin_document=$(absolute "${ADMIN_DOCUMENT:-$repo/docs/api/admin.json}")
cache=${API_CLIENTS_DIR:-$repo/target/api-clients}/typescript

for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "$tool not found: install Node 20 and npm" >&2; exit 1; }
done

# package.json is hashed too: its "type" decides how tsc reads journey.ts.
want=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)
mkdir -p "$cache"
cache=$(cd "$cache" && pwd) # the run below works from another folder
(
    # Two runs at once must not install into the same folder together.
    flock 9
    if [ "$(cat "$cache/.pinned" 2>/dev/null)" != "$want" ]; then
        echo "installing the pinned packages into $cache" >&2
        rm -rf "$cache/node_modules" "$cache/.pinned"
        cp "$here/package.json" "$here/package-lock.json" "$cache/"
        (cd "$cache" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
        # Written last: an interrupted install leaves no stamp and is redone next time.
        echo "$want" >"$cache/.pinned"
    fi
) 9>"$cache/.lock"

# Inside the cache, so that tsc finds node_modules (and package.json's "type") one level up.
run=$(mktemp -d "$cache/run.XXXXXX")
trap 'rm -rf "$run"' EXIT

failed=0
generate() {
    local document=$1 output=$2 warnings
    # openapi-typescript prints its banner on stdout and every warning on stderr.
    if ! warnings=$("$cache/node_modules/.bin/openapi-typescript" "$document" -o "$run/$output" 2>&1 >/dev/null); then
        echo "openapi-typescript cannot read $document:" >&2
        echo "$warnings" >&2
        exit 1
    fi
    if [ -n "$warnings" ]; then
        echo "openapi-typescript warns about $document:" >&2
        echo "$warnings" >&2
        failed=1
    fi
}
generate "$app_document" app.ts
generate "$admin_document" admin.ts

cp "$here/journey.ts" "$here/tsconfig.json" "$run/"
if ! (cd "$run" && "$cache/node_modules/.bin/tsc" -p . --pretty false) >"$run/tsc.out" 2>&1; then
    # One line per error with the journey line it is about, so the failed check reads on its own.
    awk -v run="$run" '
        match($0, /^journey\.ts\(([0-9]+),[0-9]+\): /) {
            split(substr($0, RSTART + 11), pos, ",")
            n = pos[1] + 0
            cmd = "sed -n " n "p " run "/journey.ts"
            cmd | getline src
            close(cmd)
            gsub(/^ +/, "", src)
            print $0
            print "    > " src
            next
        }
        { print }
    ' "$run/tsc.out" >&2
    echo "tsc: $(grep -c ': error TS' "$run/tsc.out") error(s) against $app_document and $admin_document" >&2
    failed=1
fi
if [ "$failed" -ne 0 ]; then
    exit 1
fi
echo "the journey type-checks against $app_document and $admin_document"
