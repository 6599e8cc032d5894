//! An `Idempotency-Key` on `POST /point-orders`: the same caller and key within the window
//! answers the first order; another request under the same key is refused.

use chrono::{Duration, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use relayed_routes::orders::{OrderRefusal, OrderView};
use uuid::Uuid;

use crate::db::schema::idempotency_keys;
use crate::error::PointError;

/// How long an `Idempotency-Key` binds to its first order.
pub const IDEMPOTENCY_WINDOW: Duration = Duration::hours(24);

/// A caller's key and the request it was sent with (`OrderRequest::fingerprint`).
pub(super) struct Claim<'a> {
    pub caller: i64,
    pub key: &'a str,
    pub fingerprint: Vec<u8>,
}

impl Claim<'_> {
    /// The first order made with this key within the window, if any; a different request
    /// under the same key is `IdempotencyKeyReused`.
    pub async fn replay(
        &self,
        conn: &mut AsyncPgConnection,
    ) -> Result<Option<OrderView>, PointError> {
        let found: Option<(Vec<u8>, Uuid)> = idempotency_keys::table
            .find((self.caller, self.key))
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

    /// Binds the key to the order about to be written, inside its transaction; `false` when
    /// another request holds it. An expired claim is forgotten; a live one stays. A
    /// concurrent request with the same key waits on the insert for the first to commit,
    /// then finds it.
    pub async fn take(
        &self,
        conn: &mut AsyncPgConnection,
        correlation_id: Uuid,
    ) -> Result<bool, PointError> {
        diesel::delete(idempotency_keys::table.find((self.caller, self.key)))
            .filter(idempotency_keys::created_at.le(Utc::now() - IDEMPOTENCY_WINDOW))
            .execute(conn)
            .await?;
        let claimed = diesel::insert_into(idempotency_keys::table)
            .values((
                idempotency_keys::client_id.eq(self.caller),
                idempotency_keys::key.eq(self.key),
                idempotency_keys::request_hash.eq(&self.fingerprint),
                idempotency_keys::correlation_id.eq(correlation_id),
            ))
            .on_conflict_do_nothing()
            .execute(conn)
            .await?;
        Ok(claimed > 0)
    }
}
