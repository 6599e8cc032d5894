# syntax=docker/dockerfile:1
#
# PgBouncer for k8s/components/pgbouncer: Debian 12's package (1.18), the version the
# end-to-end test runs (tests/system/pgbouncer.rs). From the repository root:
#
#   docker build -f deploy/pgbouncer.Dockerfile -t loyalty/pgbouncer:1.18.0 .
#
# The configuration comes from the ConfigMap pgbouncer-config and the Secret key
# PGBOUNCER_USERLIST, mounted under /etc/pgbouncer; logs go to stderr.
#
# No HEALTHCHECK: Kubernetes probes the port itself and ignores HEALTHCHECK.
# checkov:skip=CKV_DOCKER_2:Kubernetes probes the listening port itself and ignores HEALTHCHECK

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends pgbouncer \
    && rm -rf /var/lib/apt/lists/*
USER 10001:10001
EXPOSE 6432
# SIGINT is PgBouncer's safe shutdown (no new client; exit once the transactions in flight
# have ended); the container runtime sends it instead of SIGTERM (immediate shutdown).
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/sbin/pgbouncer"]
CMD ["/etc/pgbouncer/pgbouncer.ini"]
