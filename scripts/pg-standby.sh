#!/usr/bin/env bash
# A streaming standby of a project-local PostgreSQL cluster (one that
# `scripts/postgres.sh start-local` started), for `make failover` (tests/src/bin/failover.rs):
#
#   scripts/pg-standby.sh start PRIMARY_PORT DIR PORT   base backup of the primary on
#                                                       127.0.0.1:PRIMARY_PORT into DIR, started
#                                                       as a standby streaming from it on PORT
#   scripts/pg-standby.sh promote DIR                   promote the standby in DIR to primary
#
# The primary makes the standby synchronous itself (synchronous_standby_names, set after the
# base backup so that the standby does not inherit it: once promoted it has no standby of its
# own, and with the setting it would wait for one forever). Like postgres.sh, the PostgreSQL
# binaries refuse to run as root, so as root they run as the `postgres` user (lib.sh's as_pg_user).
set -euo pipefail

LOG_NAME=pg-standby.sh # read by lib.sh
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start() {
    local primary_port=$1 dir=$2 port=$3 bin
    bin=$(pg_bindir)
    pg_cluster_dir "$dir"
    log "base backup of 127.0.0.1:$primary_port into $dir/data"
    # -R writes standby.signal and primary_conninfo; -X stream carries the WAL written meanwhile.
    as_pg_user "$bin/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U postgres \
        -D "$dir/data" -R -X stream -c fast
    log "starting the standby on 127.0.0.1:$port"
    pg_ctl_start "$dir" "$port" cluster_name=standby
}

promote() {
    as_pg_user "$(pg_bindir)/pg_ctl" -D "$1/data" -w -t 60 promote >/dev/null
}

case "${1:-}" in
    start) start "$2" "$3" "$4" ;;
    promote) promote "$2" ;;
    *) log "usage: $0 start PRIMARY_PORT DIR PORT | promote DIR"; exit 2 ;;
esac
