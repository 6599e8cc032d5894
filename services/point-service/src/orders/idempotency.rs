//! An `Idempotency-Key` on `POST /point-orders`: the same caller and key within the window
//! answers the first order; another request under the same key is refused.

use chrono::{Duration, Utc};
use diesel::prelude::*;

use diesel::sql_types::{Array, BigInt, Text};
use diesel::upsert::excluded;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use relayed_routes::orders::{OrderRefusal, OrderView};
use uuid::Uuid;

use crate::db::schema::idempotency_keys;
use crate::error::PointError;

/// How long an `Idempotency-Key` binds to its first order.
pub const IDEMPOTENCY_WINDOW: Duration = Duration::hours(24);

/// A caller's key and the request it was sent with (`OrderRequest::fingerprint`).
#[derive(Debug, Clone)]
pub(super) struct Claim {
    pub caller: i64,
    pub key: String,
    pub fingerprint: Vec<u8>,
}

impl Claim {
    /// The first order made with this key within the window, if any; a different request
    /// under the same key is `IdempotencyKeyReused`.
    pub async fn replay(
        &self,
        conn: &mut AsyncPgConnection,
    ) -> Result<Option<OrderView>, PointError> {
        let found: Option<(Vec<u8>, Uuid)> = idempotency_keys::table
            .find((self.caller, &self.key))
            .filter(idempotency_keys::created_at.gt(Utc::now() - IDEMPOTENCY_WINDOW))
            .select((
                idempotency_keys::request_hash,
                idempotency_keys::correlation_id,
            ))
            .first(conn)
            .await
            .optional()?;
        match found {
            None => Ok(None),
            Some((hash, _)) if hash != self.fingerprint => {
                Err(OrderRefusal::IdempotencyKeyReused.into())
            }
            Some((_, correlation_id)) => Ok(Some(super::view(conn, correlation_id).await?)),
        }
    }
}

/// Binds each key to the order about to be written, inside its transaction; for each, `false`
/// when another request holds the key (also a later one of the same caller and key here,
/// which then finds the earlier one's order). A claim past the window is taken over; a live
/// one stays. A concurrent request with the same key waits on the insert for the first to
/// commit, then finds it. The keys are taken in (caller, key) order, by the one statement
/// that takes them, so two transactions taking some of the same keys wait for each other in
/// turn and never deadlock.
pub(super) async fn take_all(
    conn: &mut AsyncPgConnection,
    claims: &[(&Claim, Uuid)],
) -> QueryResult<Vec<bool>> {
    if claims.is_empty() {
        return Ok(Vec::new());
    }
    let mut sorted: Vec<&(&Claim, Uuid)> = claims.iter().collect();
    sorted.sort_by(|(a, _), (b, _)| (a.caller, &a.key).cmp(&(b.caller, &b.key)));
    sorted.dedup_by(|(a, _), (b, _)| (a.caller, &a.key) == (b.caller, &b.key));
    let rows: Vec<_> = sorted
        .iter()
        .map(|(claim, correlation_id)| {
            (
                idempotency_keys::client_id.eq(claim.caller),
                idempotency_keys::key.eq(claim.key.as_str()),
                idempotency_keys::request_hash.eq(claim.fingerprint.as_slice()),
                idempotency_keys::correlation_id.eq(*correlation_id),
            )
        })
        .collect();
    let insert = diesel::insert_into(idempotency_keys::table)
        .values(rows)
        .on_conflict((idempotency_keys::client_id, idempotency_keys::key))
        .do_update()
        .set((
            idempotency_keys::request_hash.eq(excluded(idempotency_keys::request_hash)),
            idempotency_keys::correlation_id.eq(excluded(idempotency_keys::correlation_id)),
            idempotency_keys::created_at.eq(diesel::dsl::now),
        ));
    // Only a claim past the window is taken over (`ON CONFLICT ... DO UPDATE ... WHERE`).
    let expired = idempotency_keys::created_at.le(Utc::now() - IDEMPOTENCY_WINDOW);
    let taken: Vec<(i64, String, Uuid)> =
        diesel::query_dsl::methods::FilterDsl::filter(insert, expired)
            .returning((
                idempotency_keys::client_id,
                idempotency_keys::key,
                idempotency_keys::correlation_id,
            ))
            .get_results(conn)
            .await?;
    // Taken by the request it was taken for: a later one with the same caller and key, left
    // out of the insert, finds another order's id.
    Ok(claims
        .iter()
        .map(|(claim, correlation_id)| {
            taken.iter().any(|(caller, key, id)| {
                *caller == claim.caller && *key == claim.key && id == correlation_id
            })
        })
        .collect())
}

/// Lets go of keys [`take_all`] bound in this transaction for orders that were refused after
/// all, so that the key stays free for the request's retry, as if the transaction had rolled
/// back.
pub(super) async fn release_all(
    conn: &mut AsyncPgConnection,
    claims: &[&Claim],
) -> QueryResult<()> {
    if claims.is_empty() {
        return Ok(());
    }
    let (callers, keys): (Vec<i64>, Vec<&str>) = claims
        .iter()
        .map(|claim| (claim.caller, claim.key.as_str()))
        .unzip();
    diesel::sql_query(
        "DELETE FROM idempotency_keys AS k USING unnest($1::bigint[], $2::text[]) AS c(client_id, key) \
         WHERE k.client_id = c.client_id AND k.key = c.key",
    )
    .bind::<Array<BigInt>, _>(&callers)
    .bind::<Array<Text>, _>(&keys)
    .execute(conn)
    .await?;
    Ok(())
}
