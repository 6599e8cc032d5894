#!/usr/bin/env bash
# `make fuzz-api`: schemathesis against each service's own OpenAPI document (`/openapi.json`
# of the auth, point, order and operator services), with the checks that say "every answer
# matches the document": no 5xx, every status documented, every content type and body as
# documented, every documented response header present.
#
#   1. finds PostgreSQL (scripts/postgres.sh) and makes fresh databases of its own
#      (fuzz_auth, fuzz_points, fuzz_catalog: dropped and recreated on every run, so the
#      databases of `make run` and of the tests are never touched);
#   2. builds the binaries, migrates, seeds deploy/fixtures/demo.json;
#   3. starts the four services and the payment sandbox on ports of their own (19081-19085)
#      with the development settings of scripts/run.sh, and waits for their /readyz;
#   4. logs Sara (client 1001, test mode) in with the test code, exchanges the primary token
#      for a legacy token, has the operator binary print a super_admin token, and gives each
#      to schemathesis per security scheme (and on the auth service's internal route, a
#      development credential of the order service's: `service-identity credential`);
#   5. runs schemathesis on each document in turn; exits 1 if any run reported a failure.
#
# The documents' examples and patterns name demo.json's data (an offer and occasion id,
# Sara's phone and legacy order, service 1), so that the examples phase and the generated
# requests get past validation into the rules: orders made and paid, credits, hierarchy
# changes, not only 400s.
#
# The services are stopped on exit. Their logs and schemathesis' reports (JUnit and the
# pytest file that reproduces each failure) are kept in $FUZZ_API_OUT (default
# target/fuzz-api). Knobs:
#   FUZZ_API_EXAMPLES   schemathesis --max-examples: generated cases per operation (default 50)
#   FUZZ_API_SEED       a fixed --seed to replay a run (default: a new one each run)
#   FUZZ_API_SERVICES   which documents, e.g. "auth point" (default: auth point order operator)
# schemathesis is installed on first use into a cached virtualenv, pinned below, the way
# scripts/check-deploy.sh installs its validators (a separate virtualenv, so neither script
# rebuilds the other's).
set -euo pipefail
LOG_NAME=fuzz-api # read by lib.sh
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO"

SCHEMATHESIS_VERSION=4.32.5
EXAMPLES=${FUZZ_API_EXAMPLES:-50}
SERVICES=${FUZZ_API_SERVICES:-auth point order operator}
OUT=$(realpath -m "${FUZZ_API_OUT:-target/fuzz-api}")
FIXTURE=deploy/fixtures/demo.json

PYTHON=${PYTHON:-python3}
venv=${XDG_CACHE_HOME:-$HOME/.cache}/loyalty-tools/schemathesis-venv

# --- schemathesis ----------------------------------------------------------------------------
require_commands curl psql:postgresql-client
pinned_venv "$venv" "schemathesis==$SCHEMATHESIS_VERSION"

# --- databases, binaries ---------------------------------------------------------------------
admin_url=$(postgres_admin_url)
server_url=${admin_url%/*}
recreate_databases "$admin_url" fuzz_auth fuzz_points fuzz_catalog

log "building"
cargo build --workspace --bins --quiet

declare -A port=([auth]=19081 [order]=19082 [point]=19083 [operator]=19084 [sandbox]=19085)
declare -A database=([auth]=fuzz_auth [order]=fuzz_catalog [point]=fuzz_points [operator]=fuzz_catalog)
declare -A pid_of

# The development settings (scripts/dev.env), on ports of our own.
load_dev_env
export LOG_FORMAT=json RUST_LOG=${RUST_LOG:-warn} HTTP_WORKERS=2
export_service_urls "${port[auth]}" "${port[point]}" "${port[sandbox]}" "${port[order]}"

migrate_and_seed target/debug "$FIXTURE" auth-service="$server_url/${database[auth]}" \
    point-service="$server_url/${database[point]}" order-service="$server_url/${database[order]}" \
    operator-service="$server_url/${database[operator]}" >/dev/null

# --- services --------------------------------------------------------------------------------
rm -rf "$OUT"
mkdir -p "$OUT"
for name in auth point order operator; do
    DATABASE_URL="$server_url/${database[$name]}" BIND_ADDR="127.0.0.1:${port[$name]}" \
        "target/debug/$name-service" serve >"$OUT/$name-service.log" 2>&1 &
    track $!
    pid_of[$name]=$!
done
BIND_ADDR="127.0.0.1:${port[sandbox]}" target/debug/payment-sandbox >"$OUT/payment-sandbox.log" 2>&1 &
track $!

for name in auth point order operator; do
    if ! (wait_for_url "http://127.0.0.1:${port[$name]}/readyz" 30 "${pid_of[$name]}"); then
        tail -n 20 "$OUT/$name-service.log" >&2
        fail "$name-service did not become ready on :${port[$name]}"
    fi
done

# --- tokens ----------------------------------------------------------------------------------
field() {
    "$PYTHON" -c 'import functools,json,sys; print(functools.reduce(lambda v,k: v[k], sys.argv[1:], json.load(sys.stdin)))' "$@"
}
auth=http://127.0.0.1:${port[auth]}
# Sara, in test mode: her code is always OTP_TEST_CODE, 1234 outside production.
phone=%2B966500000001
curl -fsS "$auth/api/v1/clients/reset-otp?contact_phone=$phone" >/dev/null
PRIMARY_TOKEN=$(curl -fsS "$auth/api/v1/clients/verify-otp?contact_phone=$phone&code=${OTP_TEST_CODE:-1234}" | field data access_token)
LEGACY_TOKEN=$(curl -fsS "$auth/api/v1/clients/exchange-token" -H 'Content-Type: application/json' \
    -d "{\"token\":\"$PRIMARY_TOKEN\",\"target_platform\":\"legacy\"}" | field data token)
OPERATOR_TOKEN=$(target/debug/operator-service token --role super_admin --sub 1)
export PRIMARY_TOKEN LEGACY_TOKEN OPERATOR_TOKEN

# Credentials by the security scheme names of each document: `primary` and `legacy` in the
# auth service's, `legacy` in the point and order services', `operator` in the operator
# service's; `service`, the internal routes' service credential, in the auth service's (the
# order service's credential for the client profile). schemathesis reads ${...} from the
# environment. The point service's credits and the back office's routes take a credential
# made for each request (its body included), which schemathesis cannot make: there it gets
# none, and the 401. A credential is good for five minutes: each is made as its document's run
# begins.
declare -A schemes=([auth]="primary legacy service" [point]=legacy [order]=legacy
    [operator]=operator)
declare -A scheme_token=([primary]=PRIMARY_TOKEN [legacy]=LEGACY_TOKEN [operator]=OPERATOR_TOKEN
    [service]=SERVICE_TOKEN)
write_config() {
    local name=$1 scheme
    for scheme in ${schemes[$name]}; do
        if [ "$scheme" = service ]; then
            SERVICE_TOKEN=$(target/debug/service-identity credential order-service "$name-service")
            export SERVICE_TOKEN
        fi
        printf '[auth.openapi.%s]\nbearer = "${%s}"\n\n' "$scheme" "${scheme_token[$scheme]}"
    done
}

# --- schemathesis ----------------------------------------------------------------------------
# The checks: every check schemathesis has but two. Those that make "every answer matches the
# document" (not_a_server_error: no 5xx; status_code_conformance, content_type_conformance,
# response_headers_conformance, response_schema_conformance), and with them
# unsupported_method and allow_header_conformance (another method is a 405 with `Allow`,
# docs/decisions.md), missing_required_header, ignored_auth (a route that takes a token
# refuses a request without one), use_after_free and ensure_resource_availability.
# Off, because the spec makes them inapplicable:
#   negative_data_rejection  expects a 4xx for every request outside the schema, but the spec
#       makes many routes lenient on purpose: query keys are ignored, unreadable page, limit,
#       language or coordinates fall back to defaults (nearest store is always 200),
#       add-device-id takes any body. JSON Schema cannot say "anything else reads as the
#       default"; the documents say it in their descriptions.
#   positive_data_acceptance  expects a 2xx for every request inside the schema, but most
#       refusals depend on data, not shape (the offer, order, recipient or code must exist,
#       client_id must be the caller's, a code must be live, the spec's check orders), which a
#       schema cannot hold.
CHECKS=all
EXCLUDED_CHECKS=negative_data_rejection,positive_data_acceptance

# --workers 1: with two, hypothesis (under schemathesis) hit CPython 3.11's "SystemError: AST
# constructor recursion depth mismatch" (ast.parse from two threads) on the machines' Python
# 3.11.7, an error of the tool, not of a service. One worker keeps a run within two minutes.
# --generation-database none: no example database kept between runs (each run is fresh);
# FUZZ_API_SEED replays one.
seed_args=()
[ -n "${FUZZ_API_SEED:-}" ] && seed_args=(--seed "$FUZZ_API_SEED")

failed=()
for name in $SERVICES; do
    [ -n "${port[$name]:-}" ] || fail "unknown service $name (auth, point, order, operator)"
    base=http://127.0.0.1:${port[$name]}
    echo "== schemathesis: $name-service ($base/openapi.json, $EXAMPLES examples per operation)"
    write_config "$name" >"$OUT/$name-service.toml"
    # Run from $OUT: schemathesis keeps a cache (.schemathesis/) in its working directory.
    if ! (cd "$OUT" && "$venv/bin/schemathesis" --config-file "$name-service.toml" run "$base/openapi.json" \
        --checks "$CHECKS" --exclude-checks "$EXCLUDED_CHECKS" \
        --max-examples "$EXAMPLES" "${seed_args[@]}" \
        --workers 1 \
        --request-timeout 30 \
        --generation-database none \
        --no-color \
        --report junit,pytest --report-dir "$name-service" \
        ${FUZZ_API_ARGS:-}); then
        failed+=("$name-service")
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    fail "failures in: ${failed[*]} (reports and service logs in $OUT)"
fi
log "no failure (${SERVICES// /, })"
