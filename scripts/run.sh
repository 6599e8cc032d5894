#!/usr/bin/env bash
# `make run`: finds or starts PostgreSQL, creates the three databases, migrates them, seeds
# deploy/fixtures/demo.json and runs the four services and the payment sandbox in the
# foreground with their logs prefixed. Ctrl-C stops them all; so does any one of them stopping.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FIXTURE=${FIXTURE:-deploy/fixtures/demo.json}
admin_url=$(scripts/postgres.sh)
server_url=${admin_url%/*}

for database in auth points catalog; do
    if [ "$(psql "$admin_url" -tAc "SELECT 1 FROM pg_database WHERE datname = '$database'")" != "1" ]; then
        echo "run.sh: creating database $database" >&2
        psql "$admin_url" -qc "CREATE DATABASE $database"
    fi
done

echo "run.sh: building" >&2
cargo build --workspace --bins --quiet

# Development settings (docs/design.md). The `dev-only` secrets are refused by a production start.
export APP_ENV=development LOG_FORMAT=${LOG_FORMAT:-pretty} RUST_LOG=${RUST_LOG:-info}
export AUTH_JWT_SECRET=dev-only-auth-jwt-secret-change-me-0000000000
export OPERATOR_JWT_SECRET=dev-only-operator-jwt-secret-change-me-000000
export INTERNAL_API_TOKEN=dev-only-internal-token-change-me-00000000000
export PAYMENT_WEBHOOK_SECRET=dev-only-payment-webhook-secret-change-me-00
export OTP_TEST_CODE=1234 SMS_PROVIDER=log
export AUTH_SERVICE_URL=http://127.0.0.1:8081 POINT_SERVICE_URL=http://127.0.0.1:8083
export PAYMENT_SERVICE_URL=http://127.0.0.1:8085
export POINT_ORDER_POINT_ENABLED=true POINT_ORDER_CARD_ENABLED=true USE_POINT_SERVICE=true
# The sandbox waits on its 3-D Secure page unless SANDBOX_AUTO_CAPTURE=true is set.
export POINT_SERVICE_WEBHOOK_URL=http://127.0.0.1:8083/webhooks/v1/payments
export SANDBOX_AUTO_CAPTURE=${SANDBOX_AUTO_CAPTURE:-false}

services=(auth-service:auth point-service:points order-service:catalog operator-service:catalog)

for entry in "${services[@]}"; do
    service=${entry%%:*} database=${entry#*:}
    DATABASE_URL="$server_url/$database" "target/debug/$service" migrate
    DATABASE_URL="$server_url/$database" "target/debug/$service" seed "$FIXTURE"
done

pids=()
stop_all() {
    trap - INT TERM EXIT
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap stop_all INT TERM EXIT

for entry in "${services[@]}"; do
    service=${entry%%:*} database=${entry#*:}
    prefix=$(printf '%-17s|' "$service")
    DATABASE_URL="$server_url/$database" "target/debug/$service" serve \
        > >(sed -u "s/^/$prefix /") 2> >(sed -u "s/^/$prefix /" >&2) &
    pids+=($!)
done
prefix=$(printf '%-17s|' payment-sandbox)
target/debug/payment-sandbox > >(sed -u "s/^/$prefix /") 2> >(sed -u "s/^/$prefix /" >&2) &
pids+=($!)

cat >&2 <<MSG
run.sh: up. auth-service :8081, order-service :8082, point-service :8083, operator-service :8084,
run.sh: payment-sandbox :8085 (3-D Secure pages at http://127.0.0.1:8085/3ds/<payment id>).
run.sh: each service serves /healthz /readyz /metrics /openapi.json /docs/. Ctrl-C stops all.
MSG
# Stop everything as soon as any one service stops.
wait -n "${pids[@]}" || true
echo "run.sh: stopping all services" >&2
