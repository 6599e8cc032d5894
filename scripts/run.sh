#!/usr/bin/env bash
# `make run`: finds or starts PostgreSQL, creates the three databases, migrates them, seeds
# deploy/fixtures/demo.json and runs the four services and the payment sandbox in the
# foreground with their logs prefixed. Ctrl-C stops them all; so does any one of them stopping.
set -euo pipefail
LOG_NAME=run.sh # read by lib.sh
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO"

FIXTURE=${FIXTURE:-deploy/fixtures/demo.json}
require_free_ports 8081 8082 8083 8084 8085
admin_url=$(postgres_admin_url)
server_url=${admin_url%/*}
create_missing_databases "$admin_url" auth points catalog

log "building"
cargo build --workspace --bins --quiet

# The development settings (scripts/dev.env; its `dev-only` secrets are refused by a
# production start), on the standard ports (docs/design.md, "Topology").
load_dev_env
export LOG_FORMAT=${LOG_FORMAT:-pretty} RUST_LOG=${RUST_LOG:-info}
export_service_urls 8081 8083 8085 8082
# The sandbox waits on its 3-D Secure page unless SANDBOX_AUTO_CAPTURE=true is set.

# NATS with JetStream for the points events (docs/decisions.md, "Events"): NATS_URL when set,
# else a server of this run's own on 127.0.0.1:4223 (4222 is left to a NATS this machine may
# run already), its store in a temporary folder removed at the end.
if [ -z "${NATS_URL:-}" ]; then
    require_commands nats-server
    require_free_ports 4223
    nats_store=$(mktemp -d)
    at_exit "rm -rf '$nats_store'"
    nats-server -js -a 127.0.0.1 -p 4223 -sd "$nats_store" > >(sed -u "s/^/nats-server       | /") 2>&1 &
    track $!
    export NATS_URL=nats://127.0.0.1:4223
fi

services=(auth-service=auth point-service=points order-service=catalog operator-service=catalog)
migrate_and_seed target/debug "$FIXTURE" "${services[@]/=/=$server_url/}"

# Each process in the background, its lines prefixed with its name.
pids=()
prefixed() {
    local prefix
    prefix=$(printf '%-17s|' "$1")
    shift
    "$@" > >(sed -u "s/^/$prefix /") 2> >(sed -u "s/^/$prefix /" >&2) &
    pids+=($!)
    track $!
}
for entry in "${services[@]}"; do
    service=${entry%%=*} database=${entry#*=}
    prefixed "$service" env DATABASE_URL="$server_url/$database" "target/debug/$service" serve
done
prefixed payment-sandbox target/debug/payment-sandbox

cat >&2 <<MSG
run.sh: up. auth-service :8081, order-service :8082, point-service :8083, operator-service :8084,
run.sh: payment-sandbox :8085 (3-D Secure pages at http://127.0.0.1:8085/3ds/<payment id>),
run.sh: the points events on $NATS_URL (stream LOYALTY_EVENTS).
run.sh: each service serves /healthz /readyz /metrics /openapi.json /docs/. Ctrl-C stops all.
MSG
# Stop everything as soon as any one service stops.
wait -n "${pids[@]}" || true
log "stopping all services"
