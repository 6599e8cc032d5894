#!/usr/bin/env bash
# `bench/compare.sh BASE_BIN [NEW_BIN]`: two builds of the hot paths side by side, for a change
# to one of them: the relay (make bench's row 1c: the balance through a one-worker order
# service) and point orders paid with points, many payers (row 3a), one hot payer (row 3b) and
# one order at a time (3c, one connection: its req/s is one over an order's latency).
# BASE_ENV and NEW_ENV (space-separated NAME=value) add settings to each side's point service,
# e.g. BASE_ENV=POINT_ORDER_BATCH_MAX=1 to weigh a setting with one build. BASE_BIN and NEW_BIN
# (default target/release, built here) are release target directories, e.g. a worktree of the
# commit before the change built with `cargo build --release --bins --target-dir /tmp/base`.
#
# Both builds run at once on the same databases, each behind its own ports; the rows are
# interleaved, base and new one after the other, which goes first alternating by round, so
# that both meet the same machine weather. Reports the CPU µs per request of the process under
# test (the relay's order service for 1c, the point service for 3a; /proc/<pid>/stat) and its
# throughput, per round and their medians. COMPARE_ROWS (default "1c 3a 3b"), COMPARE_ROUNDS (default 5), BENCH_SECONDS
# (default 10). Databases, data and settings are make bench's (bench/run.sh). BASE_DATABASES=own
# gives the base build databases of its own (bench_*_base), migrated by its own binaries: for a
# change whose cost is in the schema (a trigger), which shared databases would give both sides;
# BASE_POINTS_SQL then runs on the base's points database once loaded (e.g. a trigger disabled,
# to weigh it with one build on both sides).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BASE=${1:?usage: bench/compare.sh BASE_BIN [NEW_BIN]}
NEW=${2:-target/release}
ROUNDS=${COMPARE_ROUNDS:-5}
SECONDS_PER_RUN=${BENCH_SECONDS:-10}
WORK=$(mktemp -d /tmp/loyalty-compare.XXXXXX)
PIDS=()
log() { echo "compare: $*" >&2; }
cleanup() {
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT

command -v wrk >/dev/null || { sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"; $sudo apt-get install -y -q wrk >/dev/null; }
LOG_NAME=compare # read by lib.sh
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
# shellcheck source=bench/data.sh
. bench/data.sh
if [ "$NEW" = target/release ]; then
    log "building in release mode"
    bench_build
fi
bench_settings
if [ "${BASE_DATABASES:-shared}" = own ]; then
    log "migrating and loading the base build's databases with its own migrations"
    bench_data "$BASE" _base
    BASE_POINTS_DB=$POINTS_DB BASE_CATALOG_DB=$CATALOG_DB
    [ -z "${BASE_POINTS_SQL:-}" ] || psql "$BASE_POINTS_DB" -q -c "$BASE_POINTS_SQL"
fi
log "migrating and loading the demo data, scaled up (the new build's migrations)"
bench_data "$NEW"
BASE_POINTS_DB=${BASE_POINTS_DB:-$POINTS_DB} BASE_CATALOG_DB=${BASE_CATALOG_DB:-$CATALOG_DB}

# start NAME BIN_DIR BINARY PORT DB [ENV...]: a service in the background, up when ready.
declare -A PID_OF
start() {
    local name=$1 dir=$2 binary=$3 port=$4 db=$5; shift 5
    env BIND_ADDR=127.0.0.1:$port DATABASE_URL="$db" "$@" "$dir/$binary" serve >"$WORK/$name.log" 2>&1 &
    PIDS+=($!); PID_OF[$name]=$!
    until curl -sf "http://127.0.0.1:$port/readyz" >/dev/null; do
        kill -0 "${PID_OF[$name]}" 2>/dev/null || { cat "$WORK/$name.log" >&2; exit 1; }
        sleep 0.05
    done
}
export AUTH_SERVICE_URL=http://127.0.0.1:19081
start auth "$NEW" auth-service 19081 "$AUTH_DB"
# shellcheck disable=SC2086 # each side's settings are words on purpose
start point-base "$BASE" point-service 19083 "$BASE_POINTS_DB" ${BASE_ENV:-}
# shellcheck disable=SC2086
start point-new "$NEW" point-service 29083 "$POINTS_DB" ${NEW_ENV:-}
# The relay under test has one worker, as in make bench (a production pod's CPU limit of 1).
start relay-base "$BASE" order-service 19085 "$BASE_CATALOG_DB" POINT_SERVICE_URL=http://127.0.0.1:19083 HTTP_WORKERS=1
start relay-new "$NEW" order-service 29085 "$CATALOG_DB" POINT_SERVICE_URL=http://127.0.0.1:29083 HTTP_WORKERS=1

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
CLK_TCK=$(getconf CLK_TCK)
# PostgreSQL's CPU: every server process's (the pools' backends live through a run).
pg_ticks() {
    local pid
    for pid in $(pgrep -x postgres); do awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null; done |
        awk '{s += $1} END {print s + 0}'
}
# measure PID URL SCRIPT [ENV...]: "<CPU µs per request> <req/s> <PostgreSQL CPU µs per
# request>" of one wrk run.
measure() {
    local pid=$1 url=$2 script=$3; shift 3
    local before after pg_before pg_after requests
    before=$(cpu_ticks "$pid") pg_before=$(pg_ticks)
    # shellcheck disable=SC2086 # the connection words on purpose
    env "$@" wrk ${WRK_LOAD:--t2 -c32} -d"${SECONDS_PER_RUN}s" -s "bench/wrk/$script" "$url" >"$WORK/wrk.out"
    after=$(cpu_ticks "$pid") pg_after=$(pg_ticks)
    requests=$(awk '/requests in/ {print $1}' "$WORK/wrk.out")
    awk -v t=$((after - before)) -v pg=$((pg_after - pg_before)) -v hz="$CLK_TCK" -v n="$requests" \
        -v s="$SECONDS_PER_RUN" 'BEGIN { printf "%.1f %.0f %.1f\n", t * 1e6 / hz / n, n / s, pg * 1e6 / hz / n }'
}
declare -A CPU RPS PG
run() { # run ROW SIDE ROUND
    local row=$1 side=$2 round=$3 figures
    case $row in
    1c) figures=$(measure "${PID_OF[relay-$side]}" "http://127.0.0.1:$([ "$side" = base ] && echo 19085 || echo 29085)/api/v2/client/points" balance.lua CLIENT=200002) ;;
    3a) figures=$(measure "${PID_OF[point-$side]}" "http://127.0.0.1:$([ "$side" = base ] && echo 19083 || echo 29083)/api/v2/client/point-orders" order.lua) ;;
    3b) figures=$(measure "${PID_OF[point-$side]}" "http://127.0.0.1:$([ "$side" = base ] && echo 19083 || echo 29083)/api/v2/client/point-orders" order.lua PAYER=200001) ;;
    # One order at a time: what an order costs when nothing else is waiting (req/s is 1 / latency).
    3c) figures=$(WRK_LOAD="-t1 -c1" measure "${PID_OF[point-$side]}" "http://127.0.0.1:$([ "$side" = base ] && echo 19083 || echo 29083)/api/v2/client/point-orders" order.lua) ;;
    esac
    local cpu rps pg
    read -r cpu rps pg <<<"$figures"
    CPU[$row.$side]+="$cpu " RPS[$row.$side]+="$rps " PG[$row.$side]+="$pg "
    log "round $round, $row $side: $cpu µs/req, $rps req/s, PostgreSQL $pg µs/req"
}
for round in $(seq 1 "$ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then sides="base new"; else sides="new base"; fi
    for row in ${COMPARE_ROWS:-1c 3a 3b}; do
        for side in $sides; do run "$row" "$side" "$round"; done
    done
done

median() { printf '%s\n' $1 | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo
echo "| row | build | CPU µs/req, median (rounds) | req/s, median (rounds) | PostgreSQL CPU µs/req, median (rounds) |"
echo "|---|---|---|---|---|"
for row in ${COMPARE_ROWS:-1c 3a 3b}; do
    for side in base new; do
        echo "| $row | $side | $(median "${CPU[$row.$side]}") (${CPU[$row.$side]% }) | $(median "${RPS[$row.$side]}") (${RPS[$row.$side]% }) | $(median "${PG[$row.$side]}") (${PG[$row.$side]% }) |"
    done
done
