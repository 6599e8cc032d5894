#!/usr/bin/env bash
# Generates a Python client from each service's own OpenAPI document with a real generator
# (openapi-python-client) and runs walkthrough.py through them against a running stack.
# Called by tests/system/generated_clients.rs, which starts the stack and passes its
# addresses:
#   AUTH_URL POINT_URL ORDER_URL OPERATOR_URL SANDBOX_URL   the services' base URLs
#   API_CLIENTS_DIR   where the virtualenv (kept between runs) and the clients go
# A generator warning (a piece of a document it cannot type) fails the run.
# The generator is installed on first use into a cached virtualenv, pinned below, the way
# scripts/fuzz-api.sh installs schemathesis.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

GENERATOR_VERSION=0.29.1
PYTHON=${PYTHON:-python3}
dir=${API_CLIENTS_DIR:?}
venv=$dir/venv

command -v "$PYTHON" >/dev/null || { echo "$PYTHON not found: install Python 3.10 or newer (python3 and python3-venv)" >&2; exit 1; }
want="openapi-python-client==$GENERATOR_VERSION $("$PYTHON" -c 'import sys; print("python=%d.%d.%d" % sys.version_info[:3])')"
mkdir -p "$dir"
(
    # Two runs at once must not build the same venv together.
    flock 9
    if [ "$(cat "$venv/.pinned" 2>/dev/null)" != "$want" ]; then
        echo "installing the generator into $venv ($want)" >&2
        rm -rf "$venv"
        "$PYTHON" -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input \
            "openapi-python-client==$GENERATOR_VERSION"
        # Written last: an interrupted install leaves no stamp and is redone next time.
        echo "$want" >"$venv/.pinned"
    fi
) 9>"$dir/.venv.lock"

run=$(mktemp -d "$dir/run.XXXXXX")
trap 'rm -rf "$run"' EXIT
for service in auth point order operator; do
    url_var=${service^^}_URL
    "$PYTHON" -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())' \
        "${!url_var}/openapi.json" >"$run/$service.json"
    printf 'package_name_override: %s_client\npost_hooks: []\n' "$service" >"$run/$service.yaml"
    out=$("$venv/bin/openapi-python-client" generate --path "$run/$service.json" \
        --output-path "$run/clients/${service}_client" --meta none --config "$run/$service.yaml" 2>&1) || {
        echo "$out" >&2
        exit 1
    }
    if grep -q "Warning" <<<"$out"; then
        echo "the $service document does not generate cleanly:" >&2
        echo "$out" >&2
        exit 1
    fi
done
PYTHONPATH="$run/clients" "$venv/bin/python" "$here/walkthrough.py"
