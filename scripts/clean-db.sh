#!/usr/bin/env bash
# `make clean-db`: drops the databases `make run` made (auth, points, catalog), so that the next
# `make run` starts from the demo data again. A database of one of those names that `make run`
# did not make (no mark in its comment: lib.sh, create_missing_databases) is kept and named.
set -euo pipefail
LOG_NAME=clean-db.sh # read by lib.sh
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

drop_our_databases "$(postgres_admin_url)" auth points catalog
