#!/usr/bin/env bash
# `make test`: finds or starts PostgreSQL, checks formatting and lints, builds the binaries
# (the end-to-end tests run them as real processes) and runs every test. Each test that
# touches a database gets a database of its own, cloned from a migrated template.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO"

# The tests run under cargo-nextest, which gives every test a process of its own: tests that
# read the process-wide metrics registry (`/metrics`) then count only their own events.
# `cargo test` runs a binary's tests as threads of one process, where those counts race the
# other tests (and those tests refuse to run), so there is no fallback to it. When nextest is
# missing it is installed: the prebuilt binary (seconds) if get.nexte.st answers, else built
# from crates.io (`cargo install`, several minutes).
require_nextest() {
    cargo nextest --version >/dev/null 2>&1 && return
    local bin=${CARGO_HOME:-$HOME/.cargo}/bin platform='' tmp
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) platform=linux ;;
        Linux-aarch64 | Linux-arm64) platform=linux-arm ;;
        Darwin-*) platform=mac ;;
    esac
    tmp=$(mktemp -d)
    if [ -n "$platform" ] &&
        curl -fsSL --connect-timeout 10 --max-time 300 -o "$tmp/nextest.tar.gz" \
            "https://get.nexte.st/0.9/$platform" &&
        tar -xzf "$tmp/nextest.tar.gz" -C "$tmp" && mkdir -p "$bin" &&
        mv "$tmp/cargo-nextest" "$bin/"; then
        log "cargo-nextest: installed its prebuilt binary in $bin"
    else
        log "cargo-nextest: no prebuilt binary to be had, building it (several minutes)"
        cargo install cargo-nextest --locked
    fi
    rm -rf "$tmp"
    cargo nextest --version >/dev/null 2>&1 ||
        fail "cargo-nextest does not run after its install: see https://nexte.st"
}

require_nextest
# The points events' tests start NATS servers of their own (`testkit::nats`): Debian's.
require_commands nats-server
TEST_DATABASE_URL=$(postgres_admin_url)
export TEST_DATABASE_URL

# Databases left by an earlier run that was killed. One still in use (another run on the
# same server) refuses to drop, and is left alone.
psql "$TEST_DATABASE_URL" -tAc "SELECT datname FROM pg_database WHERE datname LIKE 'test\_%'" |
    while read -r name; do
        [ -n "$name" ] && psql "$TEST_DATABASE_URL" -qc "DROP DATABASE IF EXISTS \"$name\"" >/dev/null 2>&1 || true
    done

echo "== rustfmt"
cargo fmt --all -- --check
echo "== code shape (each spec message written once, short route attributes, lines, files)"
python3 scripts/code-shape.py
echo "== closed sets (each state, type, role and action word only in its type)"
python3 scripts/closed-sets.py
echo "== module graph (no cycle through an error module and a handler module)"
python3 scripts/module-cycles.py
echo "== build and clippy (the binaries and every test target, in one feature set)"
# Clippy lints our crates while they are built: `cargo clippy` is `cargo check` with
# clippy-driver (rustc with clippy's lints added) as the workspace's compiler wrapper, and the
# same wrapper under `cargo build` makes the same rlibs and binaries. A `cargo clippy` of its
# own would type-check every dependency a second time (72 s of a fresh clone's 307 s on two
# cores). The build covers what `cargo clippy --all-targets` would: every library, binary and
# test target (the workspace has no benches or examples). Exported so that nextest, the doc
# tests and check-api-documents.sh reuse this build instead of making another.
RUSTC_WORKSPACE_WRAPPER=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver) ||
    fail "clippy-driver is missing: rustup component add clippy (rust-toolchain.toml lists it)"
# How cargo-clippy hands clippy-driver its arguments (`cargo clippy -- -D warnings`).
CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
export RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
# One invocation: built apart, the binaries would have the dependencies' normal features and
# the tests those with the dev-dependencies' (tokio's test-util), and every crate above tokio
# would be compiled twice (about two minutes on two cores). The errors again at the end, with
# the disk and memory left: CI shows a failed run's last lines, and a compiler or linker killed
# for want of either says little itself.
build_log=$(mktemp)
if ! { cargo build --workspace --bins --tests --locked 2>&1 1>&3 | tee "$build_log" >&2; } 3>&1; then
    echo "== the build failed: its errors, then disk and memory"
    grep -E -A12 '^(error|warning: build failed)|signal: |No space left|Killed' "$build_log" | tail -60
    df -h . "${TMPDIR:-/tmp}"
    free -m
    exit 1
fi
rm -f "$build_log"
echo "== deploy files (Dockerfile, Kubernetes manifests)"
CHECK_DOCUMENT_FIGURES=1 scripts/check-deploy.sh
echo "== alert rules (promtool), monitoring manifests"
scripts/check-monitoring.sh
echo "== OpenAPI documents (published and served) valid as OpenAPI 3.1"
scripts/check-api-documents.sh
echo "== tests"
# Two tests per core, at most eight: most of a test's time is spent waiting on its servers'
# sockets and on PostgreSQL, not computing, so two per core keep the cores busy (on two cores:
# 148 s against 244 s for one per core, every test passing), and eight at once peaked at 62 of
# the 100 connections a default PostgreSQL allows.
test_threads=$((2 * $(getconf _NPROCESSORS_ONLN)))
[ "$test_threads" -le 8 ] || test_threads=8
cargo nextest run --workspace --locked --no-fail-fast --test-threads "$test_threads"
# nextest does not run doctests.
cargo test --workspace --doc --locked
echo "== events document (AsyncAPI 3) and the events the tests received"
bash scripts/check-events-document.sh
