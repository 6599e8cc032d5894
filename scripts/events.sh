#!/usr/bin/env bash
# `make events`: prints the points events of the NATS server `make run` started (NATS_URL,
# default nats://127.0.0.1:4223), from the first, one CloudEvent per line, and waits for more
# until Ctrl-C. scripts/events.py is the consumer (the README's example); its client,
# nats-py, is pinned here in a cached virtualenv, like the checks' tools.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO"

NATS_PY_VERSION=2.16.0
venv=${XDG_CACHE_HOME:-$HOME/.cache}/loyalty-tools/events-venv
pinned_venv "$venv" "nats-py==$NATS_PY_VERSION"
exec "$venv/bin/python" scripts/events.py
