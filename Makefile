# The two commands a newcomer needs, and the ones around them. See README.md.
.PHONY: run test events seed build api-documents bench restore-drill soak soak-rolling failover clean-db clean-local fuzz fuzz-api

FIXTURE ?= deploy/fixtures/demo.json

## make run: PostgreSQL (found or started), databases, migrations, demo data, all services.
run:
	scripts/run.sh

## make events: the points events of `make run`'s NATS, one CloudEvent per line (Ctrl-C stops).
events:
	scripts/events.sh

## make test: PostgreSQL (found or started), fmt, clippy, build, every test.
test:
	scripts/test.sh

## make seed FIXTURE=path: load a fixture into the databases `make run` uses.
## Every service loads its sections even when another reported bad rows (its `seed` exits 3:
## the valid rows loaded); the first other failure stops the run. Exits 3 if any row was bad.
seed:
	@admin=$$(scripts/postgres.sh); server=$${admin%/*}; status=0; \
	for entry in auth-service:auth point-service:points order-service:catalog operator-service:catalog; do \
	  DATABASE_URL=$$server/$${entry#*:} cargo run --quiet --bin $${entry%%:*} -- seed $(FIXTURE); \
	  code=$$?; \
	  if [ $$code -eq 3 ]; then status=3; elif [ $$code -ne 0 ]; then exit $$code; fi; \
	done; \
	exit $$status

build:
	cargo build --workspace --bins

## make api-documents: writes the OpenAPI documents by audience (docs/api/: the app's, the
## admin panel's, internal, operations) from the services' own; `make test` fails while they
## are stale. See README.md, "API documents and generated clients".
api-documents:
	cargo run --quiet -p api-documents

## make bench: the hot paths against nginx and pgbench, in release mode; rewrites
## docs/benchmarks.md. See bench/README.md.
bench:
	bench/run.sh

## make soak: 10 minutes of mixed load while the point service, the order service and
## PostgreSQL (a cluster of its own) are killed and restarted, with the money paths' awkward
## cases in the mix (lost webhooks, lost pay answers and unknown event types among them, the
## payment sync run quickly); then the ledger audit, unapplied captures and gift-code credits
## are checked, every payment the sandbox settled is credited once or listed for refund, and
## `point-service reconcile` agrees for each day of the run. SOAK_SECONDS=60 make soak for a
## short run.
soak:
	cargo build --workspace --bins --quiet
	cargo run --quiet -p e2e --bin soak

## make soak-rolling: the same load and checks on two replicas of each service behind HAProxy
## (installed from Debian when missing), restarted one at a time as a Kubernetes rollout does
## (out of the balancer, preStop, SIGTERM, drain, start, ready). No request may fail; prints
## requests and pool connections per replica. SOAK_SECONDS=60 make soak-rolling for a short run.
soak-rolling:
	cargo build --workspace --bins --quiet
	SOAK_REPLICAS=2 cargo run --quiet -p e2e --bin soak

## make failover: three Patroni members in synchronous mode and one etcd (Debian's patroni and
## etcd-server, installed when missing; project-local, on ports of their own), the services
## on a multi-host DATABASE_URL (target_session_attrs=read-write) under load; the leader's
## host is killed, Patroni elects and promotes another, the old one rejoins as a replica.
## Prints the seconds until writes succeed again and the answers in the gap; checks every
## acknowledged order, the ledger audit and the gift codes (tests/src/bin/failover/).
## FAILOVER_MODE=freeze (the leader hangs: SIGSTOP), switchover (a planned one),
## standby-lost (the synchronous standby's host killed, then back); FAILOVER_ENGINE=pg_ctl runs
## the same without Patroni (a primary, a standby, the promotion by the driver). About 2 min.
failover:
	@bash -c '. scripts/lib.sh && require_commands patroni etcd:etcd-server pg_basebackup:postgresql-client'
	cargo build --workspace --bins --quiet
	cargo run --quiet -p e2e --bin failover

## make restore-drill: pgBackRest (Debian's, installed when missing) on a project-local cluster
## with WAL archiving and the services under load; (1) a mistaken mass update recovered by a
## point-in-time restore of the cluster, (2) the catalog alone restored to an earlier time.
## After each: audit, reconcile, the gift-code checks and `point-service cross-check`.
## Prints the figures of docs/runbook.md, "Restoring a database" (tests/src/bin/restore_drill.rs).
restore-drill:
	@bash -c '. scripts/lib.sh && require_commands pgbackrest pg_dump:postgresql-client'
	cargo build --workspace --bins --quiet
	cargo run --quiet -p e2e --bin restore_drill

## make clean-db: drop the three databases `make run` made, so the next run starts from demo.json.
## Only databases `make run` made (it marks them) are dropped; others of those names are kept.
clean-db:
	@scripts/clean-db.sh

## make clean-local: stop and delete the project-local PostgreSQL cluster, if one was made.
clean-local:
	@dir=$$(scripts/postgres.sh local-dir); \
	if [ -d "$$dir/data" ]; then scripts/postgres.sh stop-local "$$dir" fast || true; rm -rf "$$dir"; echo "removed $$dir"; fi

## make fuzz: run each parser's fuzz target for FUZZ_SECONDS seconds (nightly toolchain and
## cargo-fuzz; see fuzz/README.md). A crash stops it; the input is in fuzz/artifacts/<target>/.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= order_body profile_update birth_date points_text
fuzz:
	@if ! rustup run nightly rustc --version >/dev/null 2>&1; then \
	  echo "make fuzz: needs a nightly toolchain: rustup toolchain install nightly --profile minimal (see fuzz/README.md)" >&2; exit 2; \
	fi; \
	if ! cargo +nightly fuzz --version >/dev/null 2>&1; then \
	  echo "make fuzz: needs cargo-fuzz: cargo install cargo-fuzz (see fuzz/README.md)" >&2; exit 2; \
	fi; \
	for target in $(FUZZ_TARGETS); do \
	  echo "== fuzz $$target ($(FUZZ_SECONDS) s)"; \
	  mkdir -p fuzz/corpus/$$target && \
	  cargo +nightly fuzz run --debug-assertions $$target fuzz/corpus/$$target fuzz/seeds/$$target -- \
	    -max_total_time=$(FUZZ_SECONDS) -max_len=4096 || exit 1; \
	done

## make fuzz-api: schemathesis against each service's /openapi.json (auth, point, order,
## operator) on databases and ports of its own: no 5xx, and every answer's status, content
## type, headers and body as documented (see scripts/fuzz-api.sh). FUZZ_API_EXAMPLES (50)
## generated cases per operation; FUZZ_API_SEED=n replays a run. Reports: target/fuzz-api/.
fuzz-api:
	scripts/fuzz-api.sh
