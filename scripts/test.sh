#!/usr/bin/env bash
# `make test`: finds or starts PostgreSQL, checks formatting and lints, builds the binaries
# (the end-to-end tests run them as real processes) and runs every test. Each test that
# touches a database gets a database of its own, cloned from a migrated template.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO"

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
echo "== clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== build"
cargo build --workspace --bins --locked
echo "== deploy files (Dockerfile, Kubernetes manifests)"
scripts/check-deploy.sh
echo "== alert rules (promtool), monitoring manifests"
scripts/check-monitoring.sh
echo "== tests"
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --locked --no-fail-fast
    # nextest does not run doctests.
    cargo test --workspace --doc --locked
else
    cargo test --workspace --locked --no-fail-fast
fi
