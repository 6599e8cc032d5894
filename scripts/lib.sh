# shellcheck shell=bash
# What the scripts of scripts/ and bench/ share. Source it, do not run it:
#
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"      (from scripts/; from bench/, ../scripts/lib.sh)
#
# It defines functions and two variables, REPO (the repository root) and LOG_NAME (the
# prefix of `log`, the script's name unless set before sourcing), and changes nothing else:
# no `cd`, no trap until `at_exit` or `track` asks for one.
#
#   log MESSAGE / fail MESSAGE           a line on stderr; `fail` exits 1 after it
#   load_dev_env                         export scripts/dev.env, the development settings
#   export_service_urls AUTH POINT PAY ORDER   the addresses the services call each other on
#   postgres_admin_url                   find or start PostgreSQL (scripts/postgres.sh)
#   create_missing_databases ADMIN DB…   make the databases that do not exist yet, marked as ours
#   drop_our_databases ADMIN DB…         drop those of them that carry that mark, keep the rest
#   recreate_databases ADMIN DB…         drop (ending their sessions) and make them again
#   migrate_and_seed BIN FIXTURE SERVICE=URL…   each binary's `migrate` and `seed FIXTURE`
#   pg_bindir                            the folder of the PostgreSQL server binaries
#   as_pg_user COMMAND…                  run a server binary as a user it accepts
#   pg_cluster_dir DIR                   make DIR, a cluster's folder, the server's user's
#   pg_ctl_start DIR PORT [SETTING…]     start the cluster of DIR/data on 127.0.0.1:PORT
#   install_packages PACKAGE…            Debian packages, with sudo unless root
#   require_commands COMMAND[:PACKAGE]…  install the packages of the commands not found
#   pinned_venv DIR REQUIREMENT…         a cached Python virtualenv holding exactly these
#   pinned_node_modules DIR SRC          cached node_modules holding what SRC's lock pins
#   require_free_ports PORT…             fail if anything listens on one of them
#   wait_for_url URL SECONDS [PID]       until URL answers 2xx (fails if PID dies first)
#   at_exit COMMAND / track PID          run COMMAND / stop PID when the script ends

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOG_NAME=${LOG_NAME:-$(basename "$0" .sh)}

log() { echo "$LOG_NAME: $*" >&2; }

fail() {
    log "$*"
    exit 1
}

# --- settings ----------------------------------------------------------------------------------

# The development settings (secrets marked `dev-only`, `SMS_PROVIDER=log`, the point-order
# flags), exported for the binaries this script starts. Values already set win, so that
# `SANDBOX_AUTO_CAPTURE=true make run` and the like keep working for any of them.
load_dev_env() {
    local name value
    while IFS='=' read -r name value; do
        case $name in '' | '#'*) continue ;; esac
        if [ -z "${!name+set}" ]; then
            export "$name=$value"
        else
            export "${name?}"
        fi
    done <"$REPO/scripts/dev.env"
}

# The addresses the services call each other on, for services on the given ports: the auth
# service (caller lookup, profiles), the point service (relay, credits, the sandbox's
# webhook, the back office), the payment service (the sandbox) and the order service (the
# back office).
export_service_urls() {
    local auth=$1 point=$2 payment=$3 order=$4
    export AUTH_SERVICE_URL=http://127.0.0.1:$auth
    export POINT_SERVICE_URL=http://127.0.0.1:$point
    export ORDER_SERVICE_URL=http://127.0.0.1:$order
    export PAYMENT_SERVICE_URL=http://127.0.0.1:$payment
    export POINT_SERVICE_WEBHOOK_URL=http://127.0.0.1:$point/webhooks/v1/payments
}

# --- PostgreSQL --------------------------------------------------------------------------------

# The admin URL (database `postgres`) of the server `make run` and `make test` use:
# DATABASE_URL's server, else 127.0.0.1:5432, else a project-local cluster.
postgres_admin_url() {
    "$REPO/scripts/postgres.sh"
}

# The mark `make run` leaves on a database it made (its comment), so that `make clean-db`
# drops only those: on a server it merely found (DATABASE_URL's, or one on 127.0.0.1:5432),
# databases named `auth`, `points` or `catalog` may well be someone else's.
OUR_DATABASE_MARK='made by make run (loyalty backend); make clean-db may drop it'

create_missing_databases() {
    local admin=$1 database
    shift
    for database in "$@"; do
        if [ "$(psql "$admin" -tAc "SELECT 1 FROM pg_database WHERE datname = '$database'")" != "1" ]; then
            log "creating database $database"
            psql "$admin" -qc "CREATE DATABASE $database"
            psql "$admin" -qc "COMMENT ON DATABASE $database IS '$OUR_DATABASE_MARK'"
        fi
    done
}

drop_our_databases() {
    local admin=$1 database mark
    shift
    for database in "$@"; do
        # Nothing: no such database; `-`: one with no comment.
        mark=$(psql "$admin" -tAc "SELECT coalesce(shobj_description(oid, 'pg_database'), '-') FROM pg_database WHERE datname = '$database'")
        if [ -z "$mark" ]; then
            log "no database $database"
        elif [ "$mark" = "$OUR_DATABASE_MARK" ]; then
            psql "$admin" -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)"
            log "dropped $database"
        else
            log "kept $database: make run did not make it (its comment has no mark); drop it yourself if it is yours"
        fi
    done
}

recreate_databases() {
    local admin=$1 database
    shift
    for database in "$@"; do
        psql "$admin" -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)"
        psql "$admin" -qc "CREATE DATABASE $database"
    done
}

# migrate_and_seed target/debug deploy/fixtures/demo.json auth-service=postgres://…/auth …
migrate_and_seed() {
    local bin=$1 fixture=$2 entry
    shift 2
    for entry in "$@"; do
        DATABASE_URL=${entry#*=} "$bin/${entry%%=*}" migrate
        DATABASE_URL=${entry#*=} "$bin/${entry%%=*}" seed "$fixture"
    done
}

# --- local PostgreSQL clusters (scripts/postgres.sh, scripts/pg-standby.sh) -------------------

# The newest installed PostgreSQL's binaries (the Debian package is installed when there
# are none).
pg_bindir() {
    local dir
    if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
        pg_config --bindir
        return
    fi
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
        echo "$dir"
        return
    fi
    log "no PostgreSQL binaries found"
    install_packages postgresql
    ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1
}

# Runs a PostgreSQL server binary as a user it accepts: initdb and postgres refuse to run as
# root, so as root they run as the `postgres` user.
as_pg_user() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Makes DIR, the folder of a cluster (its data/, socket and server.log), owned by the user
# the server runs as.
pg_cluster_dir() {
    mkdir -p "$1"
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres:postgres "$1"
    fi
}

# pg_ctl_start DIR PORT [SETTING…]: starts the cluster of DIR/data listening on
# 127.0.0.1:PORT (socket in DIR, log in DIR/server.log) with room for the test suites'
# connections, and the given `name=value` settings on top; waits until it accepts them.
pg_ctl_start() {
    local dir=$1 port=$2 options setting
    shift 2
    options="-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300"
    for setting in "$@"; do options+=" -c $setting"; done
    as_pg_user "$(pg_bindir)/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 -o "$options" start >/dev/null
}

# --- tools -------------------------------------------------------------------------------------

install_packages() {
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    log "installing the Debian packages $*"
    # A fresh machine has no package lists yet: update once and try again.
    if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2; then
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
    fi
}

# require_commands curl psql:postgresql-client: a command's package is its own name unless
# given after a colon.
require_commands() {
    local entry missing=()
    for entry in "$@"; do
        command -v "${entry%%:*}" >/dev/null 2>&1 || missing+=("${entry#*:}")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        install_packages "${missing[@]}"
    fi
}

# pinned_venv DIR REQUIREMENT…: a virtualenv in DIR holding exactly these pip requirements,
# built on first use and rebuilt only when a requirement (or the Python version) changes.
# Two runs at once (make test in two worktrees) wait for each other instead of building the
# same virtualenv together. Uses $PYTHON (default python3).
pinned_venv() {
    local venv=$1 python=${PYTHON:-python3} want
    shift
    command -v "$python" >/dev/null || fail "$python not found: install Python 3.10 or newer (python3 and python3-venv)"
    want="$* $("$python" -c 'import sys; print("python=%d.%d.%d" % sys.version_info[:3])')"
    mkdir -p "$(dirname "$venv")"
    (
        flock 9
        if [ "$(cat "$venv/.pinned" 2>/dev/null)" != "$want" ]; then
            log "installing $* into $venv"
            rm -rf "$venv"
            "$python" -m venv "$venv"
            "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input "$@"
            # Written last: an interrupted install leaves no stamp and is redone next time.
            echo "$want" >"$venv/.pinned"
        fi
    ) 9>"$venv.lock"
}

# pinned_node_modules DIR SRC: DIR/node_modules holding exactly what SRC/package-lock.json
# pins (npm ci, scripts not run), installed on first use and again only when SRC's
# package.json or package-lock.json changes; DIR gets their copies. Like pinned_venv, two runs
# at once wait for each other.
pinned_node_modules() {
    local tools=$1 src=$2 want
    command -v node >/dev/null && command -v npm >/dev/null || fail "node and npm are needed (Node.js 20)"
    want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)
    mkdir -p "$tools"
    (
        flock 9
        if [ "$(cat "$tools/.pinned" 2>/dev/null)" != "$want" ]; then
            log "installing the packages $src/package-lock.json pins into $tools"
            rm -rf "$tools/node_modules" "$tools/.pinned"
            cp "$src/package.json" "$src/package-lock.json" "$tools/"
            (cd "$tools" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
            # Written last: an interrupted install leaves no stamp and is redone next time.
            echo "$want" >"$tools/.pinned"
        fi
    ) 9>"$tools/.lock"
}

# --- processes ---------------------------------------------------------------------------------

require_free_ports() {
    local port taken=()
    for port in "$@"; do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            taken+=("$port")
        fi
    done
    if [ ${#taken[@]} -gt 0 ]; then
        fail "something already listens on 127.0.0.1:${taken[*]} (another make run?); stop it first"
    fi
}

# wait_for_url URL SECONDS [PID]: polls URL until it answers 2xx. Fails after SECONDS, or at
# once when PID (the process that should answer) is gone.
wait_for_url() {
    local url=$1 seconds=$2 pid=${3:-} deadline
    deadline=$((SECONDS + seconds))
    until curl -fsS -o /dev/null "$url" 2>/dev/null; do
        if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
            fail "$url: the process that serves it ($pid) has exited"
        fi
        [ "$SECONDS" -lt "$deadline" ] || fail "$url did not answer within $seconds s"
        sleep 0.1
    done
}

AT_EXIT=()
TRACKED=()

# Runs COMMAND (a string, for eval) when the script ends, however it ends: the commands in
# the reverse order of registration, after the tracked processes are stopped.
at_exit() {
    AT_EXIT+=("$1")
    _trap_exit
}

# Sends SIGTERM to PID when the script ends, and waits for it.
track() {
    TRACKED+=("$1")
    _trap_exit
}

_trap_exit() {
    trap _on_exit EXIT
    # Ctrl-C or a TERM ends the script through EXIT, so the cleanup runs once either way.
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

_on_exit() {
    local pid i
    trap - EXIT INT TERM
    for pid in "${TRACKED[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${TRACKED[@]}"; do wait "$pid" 2>/dev/null || true; done
    for ((i = ${#AT_EXIT[@]} - 1; i >= 0; i--)); do eval "${AT_EXIT[i]}" || true; done
}
