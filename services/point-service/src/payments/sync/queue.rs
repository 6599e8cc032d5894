//! The orders whose payments are to be read back (`payment_syncs`): scheduled by each pay
//! attempt and by an event of an unknown type, taken one at a time by the worker, then done,
//! due again after a backoff, or listed for a person past the horizon. Every write of a
//! sync's outcome holds only while the schedule it took is current ([`Taken::generation`]).

use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::{Bool, Double, Integer, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::{DISAGREEMENTS_LISTED, LISTED};
use crate::config::SyncSettings;
use crate::db::schema::payment_syncs;
use crate::payments::machine::Status;

/// The longest wait between two reads of one order.
pub const MAX_BACKOFF: Duration = Duration::from_secs(3600);

/// Schedules the order's sync `after` from now: called in a pay attempt's transaction, so
/// the order's latest attempt decides when (and the horizon counts from it).
pub async fn schedule(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
    after: Duration,
) -> QueryResult<()> {
    diesel::sql_query(
        "INSERT INTO payment_syncs (correlation_id, since, due_at) \
         VALUES ($1, now(), now() + make_interval(secs => $2)) \
         ON CONFLICT (correlation_id) DO UPDATE \
         SET since = now(), due_at = EXCLUDED.due_at, tries = 0, disagreements = 0, \
             last_error = NULL, listed_at = NULL, resolved_at = NULL, resolution = NULL, \
             generation = nextval('payment_sync_generations')",
    )
    .bind::<diesel::sql_types::Uuid, _>(correlation_id)
    .bind::<Double, _>(after.as_secs_f64())
    .execute(conn)
    .await?;
    Ok(())
}

/// Schedules the order's sync now, if it is still open: a signed event of a type the
/// service does not know named it, and it may say the payment was taken. Listed orders are
/// read again too. The horizon keeps counting from the latest attempt.
pub async fn schedule_now(conn: &mut AsyncPgConnection, correlation_id: Uuid) -> QueryResult<()> {
    diesel::sql_query(
        "INSERT INTO payment_syncs (correlation_id, since, due_at) \
         SELECT correlation_id, now(), now() FROM point_orders \
         WHERE correlation_id = $1 AND status = $2 \
         ON CONFLICT (correlation_id) DO UPDATE \
         SET due_at = now(), listed_at = NULL, resolved_at = NULL, resolution = NULL, \
             generation = nextval('payment_sync_generations')",
    )
    .bind::<diesel::sql_types::Uuid, _>(correlation_id)
    .bind::<Text, _>(Status::Open)
    .execute(conn)
    .await?;
    Ok(())
}

/// The order is final: nothing is left to sync. Called where the order moves, in the same
/// transaction.
pub async fn done(conn: &mut AsyncPgConnection, correlation_id: Uuid) -> QueryResult<()> {
    diesel::delete(payment_syncs::table.find(correlation_id))
        .execute(conn)
        .await?;
    Ok(())
}

/// The sync `taken` found nothing left to wait for: its row goes, unless a newer schedule
/// (a pay attempt or an unknown event since it was taken) replaced it.
pub(super) async fn finished(conn: &mut AsyncPgConnection, taken: &Taken) -> QueryResult<()> {
    diesel::delete(
        payment_syncs::table
            .find(taken.correlation_id)
            .filter(payment_syncs::generation.eq(taken.generation)),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// An order taken for one sync.
#[derive(Debug, QueryableByName)]
pub struct Taken {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    pub correlation_id: Uuid,
    /// Reads of this order since its latest attempt, this one included.
    #[diesel(sql_type = Integer)]
    pub tries: i32,
    /// The horizon has passed since its latest attempt.
    #[diesel(sql_type = Bool)]
    pub past_horizon: bool,
    /// The schedule this sync answers; its outcome is written only while it is current.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub generation: i64,
}

/// Takes the most overdue order, if any, pushing its due time `lease` ahead. `SKIP LOCKED`
/// lets two workers (a leader and one whose lease ran out under it) never take one order
/// at once.
pub async fn take_due(
    conn: &mut AsyncPgConnection,
    lease: Duration,
    horizon: Duration,
) -> QueryResult<Option<Taken>> {
    diesel::sql_query(
        "UPDATE payment_syncs s \
         SET due_at = now() + make_interval(secs => $1), tries = s.tries + 1 \
         WHERE s.correlation_id = (SELECT correlation_id FROM payment_syncs \
                                   WHERE listed_at IS NULL AND due_at <= now() \
                                   ORDER BY due_at LIMIT 1 FOR UPDATE SKIP LOCKED) \
         RETURNING s.correlation_id, s.tries, s.generation, \
                   s.since < now() - make_interval(secs => $2) AS past_horizon",
    )
    .bind::<Double, _>(lease.as_secs_f64())
    .bind::<Double, _>(horizon.as_secs_f64())
    .get_result(conn)
    .await
    .optional()
}

/// How long the order waits before its next read after `tries` reads: `after`, doubled
/// with each read, at most [`MAX_BACKOFF`].
pub fn backoff(settings: &SyncSettings, tries: i32) -> Duration {
    let doublings = u32::try_from(tries.saturating_sub(1)).unwrap_or(0).min(20);
    settings
        .after
        .saturating_mul(1 << doublings)
        .min(MAX_BACKOFF)
}

/// After a read that left the order open and undecided: the next read `wait` away, with
/// why, unless a newer schedule replaced the one `taken` answers.
pub async fn retry_later(
    conn: &mut AsyncPgConnection,
    taken: &Taken,
    wait: Duration,
    why: &str,
) -> QueryResult<()> {
    diesel::sql_query(
        "UPDATE payment_syncs SET due_at = now() + make_interval(secs => $2), last_error = $3 \
         WHERE correlation_id = $1 AND generation = $4",
    )
    .bind::<diesel::sql_types::Uuid, _>(taken.correlation_id)
    .bind::<Double, _>(wait.as_secs_f64())
    .bind::<Text, _>(why)
    .bind::<diesel::sql_types::BigInt, _>(taken.generation)
    .execute(conn)
    .await?;
    Ok(())
}

/// Past the horizon and still undecided: listed for a person, read no more (unless a newer
/// schedule replaced the one `taken` answers).
pub async fn list(conn: &mut AsyncPgConnection, taken: &Taken, why: &str) -> QueryResult<()> {
    let listed = diesel::update(
        payment_syncs::table
            .find(taken.correlation_id)
            .filter(payment_syncs::generation.eq(taken.generation)),
    )
    .set((
        payment_syncs::listed_at.eq(diesel::dsl::now),
        payment_syncs::last_error.eq(why),
    ))
    .execute(conn)
    .await?;
    if listed == 1 {
        metrics::counter!(LISTED).increment(1);
        tracing::error!(
            order.id = %taken.correlation_id, reason = why,
            "payment still undecided past the sync horizon; listed for a person (point-service unsynced-orders)"
        );
    }
    Ok(())
}

/// The order stays open with a payment undecided (`why`): read again after the backoff, or
/// listed for a person past the horizon. Also what becomes of an order whose sync failed
/// (an error of ours or the database's), so that one that keeps failing is listed too.
pub async fn undecided(
    conn: &mut AsyncPgConnection,
    settings: &SyncSettings,
    taken: &Taken,
    why: &str,
) -> QueryResult<()> {
    if taken.past_horizon {
        list(conn, taken, why).await
    } else {
        retry_later(conn, taken, backoff(settings, taken.tries), why).await
    }
}

/// A pass whose reads of a payment disagreed (`why` has both readings): nothing was
/// applied; read again after the backoff, or listed for a person at the
/// [`DISAGREEMENTS_LISTED`]th such pass since the latest attempt (or past the horizon).
pub async fn disagreed(
    conn: &mut AsyncPgConnection,
    settings: &SyncSettings,
    taken: &Taken,
    why: &str,
) -> QueryResult<()> {
    let disagreements: Option<i32> = diesel::update(
        payment_syncs::table
            .find(taken.correlation_id)
            .filter(payment_syncs::generation.eq(taken.generation)),
    )
    .set(payment_syncs::disagreements.eq(payment_syncs::disagreements + 1))
    .returning(payment_syncs::disagreements)
    .get_result(conn)
    .await
    .optional()?;
    match disagreements {
        None => Ok(()),
        Some(n) if n >= DISAGREEMENTS_LISTED || taken.past_horizon => list(conn, taken, why).await,
        Some(_) => retry_later(conn, taken, backoff(settings, taken.tries), why).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_doubles_from_the_delay_up_to_an_hour() {
        let settings = SyncSettings {
            after: Duration::from_secs(120),
            ..SyncSettings::default()
        };
        let waits: Vec<u64> = (1..=8).map(|t| backoff(&settings, t).as_secs()).collect();
        assert_eq!(waits, [120, 240, 480, 960, 1920, 3600, 3600, 3600]);
        assert_eq!(backoff(&settings, 0).as_secs(), 120);
        assert_eq!(backoff(&settings, i32::MAX), MAX_BACKOFF);
    }
}
