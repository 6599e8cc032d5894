# Sourced by bench/run.sh and bench/compare.sh (after scripts/lib.sh): the benchmarks' settings,
# databases and data, the same for both.

# bench_settings: the development settings (scripts/dev.env: the dev-only secrets,
# SMS_PROVIDER=log, both point-order flags on), shared with make run and make fuzz-api, under
# the production log settings (k8s/base/config/*.env): the level decides which spans and
# fields the log layer builds on every request, even when no line is written.
bench_settings() {
    load_dev_env
    export LOG_FORMAT=json RUST_LOG=info
}

# The release binaries the benchmarks start, and only those: each service binary links the
# whole dependency tree through thin LTO (one to three minutes on two cores), so the test
# tools (soak, failover, restore_drill, api-documents...) would double the build.
BENCH_BINARIES=(auth-service point-service order-service operator-service bench-floor)

# bench_build [CARGO_ARGS...]: builds BENCH_BINARIES in release mode.
bench_build() {
    cargo build --release --locked --quiet "${BENCH_BINARIES[@]/#/--bin=}" "$@"
}

# bench_data BIN [SUFFIX]: drops and creates bench_auth, bench_points and bench_catalog (each
# name followed by SUFFIX) on the PostgreSQL that scripts/postgres.sh finds or starts, migrates
# them with the binaries in BIN, loads deploy/fixtures/demo.json and scales it up
# (bench/sql/*.sql: 100 000 clients with points, 1 000 offers, 200 000 stores). Sets AUTH_DB,
# POINTS_DB and CATALOG_DB.
bench_data() {
    local bin=$1 suffix=${2:-} admin server db entry
    admin=$(scripts/postgres.sh)
    server=${admin%/*}
    for db in bench_auth$suffix bench_points$suffix bench_catalog$suffix; do
        psql "$admin" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)"
        psql "$admin" -qc "CREATE DATABASE $db"
    done
    AUTH_DB=$server/bench_auth$suffix POINTS_DB=$server/bench_points$suffix
    CATALOG_DB=$server/bench_catalog$suffix
    for entry in auth-service:$AUTH_DB point-service:$POINTS_DB order-service:$CATALOG_DB \
        operator-service:$CATALOG_DB; do
        DATABASE_URL=${entry#*:} "$bin/${entry%%:*}" migrate >/dev/null
        DATABASE_URL=${entry#*:} "$bin/${entry%%:*}" seed deploy/fixtures/demo.json >/dev/null
    done
    psql "$AUTH_DB" -q -f bench/sql/auth.sql
    psql "$POINTS_DB" -q -f bench/sql/points.sql
    psql "$CATALOG_DB" -q -f bench/sql/catalog.sql
}
