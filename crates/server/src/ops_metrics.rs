//! The metric families of this crate's shared parts, for every service built on it: the
//! database pool (`/metrics`), the readiness probe (`/readyz`) and the caller lookup
//! ([`crate::caller`]). Their names and HELP text are here, in one place.

/// The database pool's connections by state (`max`, `open`, `in_use`, `idle`, `waiting`), as
/// each scrape finds them.
pub const DB_POOL_CONNECTIONS: &str = "db_pool_connections";

/// `/readyz` checks by outcome: `ready` (the database answered) or `unavailable` (503). A pod
/// failing its checks still answers `/metrics`, so this is what tells a Prometheus that the
/// kubelet keeps it out of its Service.
pub const READINESS_CHECKS: &str = "readiness_checks_total";

/// The outcomes of [`READINESS_CHECKS`], exported at zero.
pub const READINESS_OUTCOMES: [&str; 2] = ["ready", "unavailable"];

/// Callers looked up at the auth service (`GET /api/v1/users`), by outcome
/// ([`crate::caller::LookupOutcome`]). A failed lookup answers the app 401 like a bad token,
/// so without this an auth outage shows only as clients "logged out".
pub const CALLER_LOOKUPS: &str = "caller_lookups_total";

/// Describes every family above and exports the readiness counter at zero
/// (`telemetry::metrics::counters_at_zero` says why). Called once per server start.
pub fn register() {
    telemetry::metrics::handle();
    metrics::describe_gauge!(
        DB_POOL_CONNECTIONS,
        metrics::Unit::Count,
        "Database pool connections by state: max (the pool's size), open, in_use, idle, and \
         waiting (requests waiting for a connection), as of the scrape."
    );
    metrics::describe_counter!(
        READINESS_CHECKS,
        metrics::Unit::Count,
        "Readiness checks (/readyz) by outcome: ready (the database answered) or unavailable (answered 503)."
    );
    metrics::describe_counter!(
        CALLER_LOOKUPS,
        metrics::Unit::Count,
        "Callers looked up at the auth service, by outcome: ok, refused (the token was refused: \
         401), or failed ones answered 401 too: 5xx, timeout, unreachable, unreadable (no \
         numeric client id)."
    );
    telemetry::metrics::counters_at_zero(READINESS_CHECKS, "outcome", &READINESS_OUTCOMES);
}
