//! Leases in a database's `worker_leases`: which replica runs a background worker that only
//! one should run at a time (the point service's payment sync, each service's events
//! publisher). A lease is held under a holder's name until a time; its holder renews it, and
//! anyone takes it once it has run out.

use std::time::Duration;

use diesel::sql_types::{Double, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// This replica's name as a lease's holder: its `HOSTNAME` and listening address (a pod keeps
/// its name across a restart, so the same replica holds its lease again at once), or a random
/// name without one.
pub fn holder(hostname: Option<&str>, bind_addr: &impl std::fmt::Display) -> String {
    match hostname {
        Some(host) => format!("{host}/{bind_addr}"),
        None => uuid::Uuid::new_v4().to_string(),
    }
}

/// Takes or renews the lease `name` for `holder` for `lease` more; true while it holds it.
pub async fn lead(
    conn: &mut AsyncPgConnection,
    name: &str,
    holder: &str,
    lease: Duration,
) -> diesel::QueryResult<bool> {
    let held = diesel::sql_query(
        "INSERT INTO worker_leases (name, holder, until) \
         VALUES ($1, $2, now() + make_interval(secs => $3)) \
         ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, until = EXCLUDED.until \
         WHERE worker_leases.holder = EXCLUDED.holder OR worker_leases.until <= now()",
    )
    .bind::<Text, _>(name)
    .bind::<Text, _>(holder)
    .bind::<Double, _>(lease.as_secs_f64())
    .execute(conn)
    .await?;
    Ok(held == 1)
}

/// Gives the lease `name` back, so another replica takes over at its next pass.
pub async fn release(
    conn: &mut AsyncPgConnection,
    name: &str,
    holder: &str,
) -> diesel::QueryResult<()> {
    diesel::sql_query("DELETE FROM worker_leases WHERE name = $1 AND holder = $2")
        .bind::<Text, _>(name)
        .bind::<Text, _>(holder)
        .execute(conn)
        .await?;
    Ok(())
}
