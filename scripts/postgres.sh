#!/usr/bin/env bash
# Finds or starts the PostgreSQL server that `make run` and `make test` use, and prints its
# admin URL (the `postgres` database) on stdout; progress goes to stderr.
#
#   scripts/postgres.sh                      discover: $DATABASE_URL, else a server on
#                                            127.0.0.1:5432, else a project-local cluster
#   scripts/postgres.sh start-local DIR PORT start (initialising if needed) a cluster in DIR
#   scripts/postgres.sh stop-local DIR [MODE] stop it (MODE: fast or immediate)
#   scripts/postgres.sh local-dir            print the folder discovery would use
#
# A local cluster is made with the installed PostgreSQL binaries (the Debian package is
# installed when there are none; see lib.sh's pg_bindir). initdb and postgres refuse to run
# as root, so as root they run as the `postgres` user and the cluster lives where that user
# can write.
set -euo pipefail
LOG_NAME=postgres.sh # read by lib.sh
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LOCAL_PORT=${LOCAL_PG_PORT:-55432}

# The default local cluster folder: in the project, unless we are root, in which case the
# `postgres` user may not be able to reach the project, so a folder of its own in /tmp.
default_local_dir() {
    if [ "$(id -u)" -eq 0 ]; then
        echo "/tmp/loyalty-pg-$(echo -n "$REPO" | sha256sum | cut -c1-12)"
    else
        echo "$REPO/.local/pg"
    fi
}

start_local() {
    local dir=$1 port=$2 bin
    bin=$(pg_bindir)
    pg_cluster_dir "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        log "initialising a local cluster in $dir/data"
        as_pg_user "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --no-locale >/dev/null
    fi
    if ! as_pg_user "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
        log "starting the local cluster on 127.0.0.1:$port"
        pg_ctl_start "$dir" "$port" fsync=off
    fi
    echo "postgres://postgres@127.0.0.1:$port/postgres"
}

stop_local() {
    local dir=$1 mode=${2:-fast} bin
    bin=$(pg_bindir)
    as_pg_user "$bin/pg_ctl" -D "$dir/data" -m "$mode" -w stop >/dev/null
}

answers() {
    if command -v pg_isready >/dev/null 2>&1; then
        pg_isready -q -d "$1" -t 3
    else
        (exec 3<>"/dev/tcp/127.0.0.1/5432") 2>/dev/null
    fi
}

discover() {
    if [ -n "${DATABASE_URL:-}" ]; then
        log "using DATABASE_URL's server"
        # Any database on that server will do as the admin connection: use `postgres`.
        echo "${DATABASE_URL%/*}/postgres"
        return
    fi
    if answers "postgres://postgres@127.0.0.1:5432/postgres"; then
        log "using the server on 127.0.0.1:5432"
        echo "postgres://postgres@127.0.0.1:5432/postgres"
        return
    fi
    start_local "$(default_local_dir)" "$LOCAL_PORT"
}

case "${1:-discover}" in
    discover) discover ;;
    start-local) start_local "$2" "$3" ;;
    stop-local) stop_local "$2" "${3:-fast}" ;;
    local-dir) default_local_dir ;;
    *) log "unknown command $1"; exit 2 ;;
esac
