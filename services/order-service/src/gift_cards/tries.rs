//! The wrong-code limits: so many wrong codes per client and per client address in the
//! last hour. A redemption takes two advisory locks (the client's, then the address's, as
//! the auth service's OTP limits do) before it counts, and holds them while it looks the
//! code up and records a wrong one, all in one short transaction: a burst of parallel
//! requests takes turns, so no code is looked at once the limit is reached (a right code
//! hidden among wrong ones gets no extra chances). This serialises one client's, and one
//! address's, redemptions; the locks are never held across the credit call.

use std::collections::BTreeMap;

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use envelope::{Envelope, RetryAfter};
use utoipa::openapi::{RefOr, Response};

use catalog_db::schema::gift_card_tries;

use crate::error::OrderError;

/// Wrong codes allowed per hour.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub per_client: i64,
    pub per_ip: i64,
}

/// The 429 of the limits ([`OrderError::TooManyRequests`]) as a document shows it, with its
/// `Retry-After`: a route that checks them lists it in its `responses(...)`.
pub struct LimitAnswer;

impl utoipa::IntoResponses for LimitAnswer {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        let limited = OrderError::TooManyRequests(RetryAfter::seconds(None));
        let description = format!(
            "`{limited}`: this client (`GIFT_CODE_TRIES_PER_CLIENT_PER_HOUR`, default 10) or this \
             client address (`GIFT_CODE_TRIES_PER_IP_PER_HOUR`, default 30) tried that many wrong \
             codes in the last hour; checked before the code"
        );
        let mut answer =
            envelope::openapi::answer(&description, envelope::openapi::schema_name(Envelope::C));
        envelope::openapi::add_retry_after(
            &mut answer,
            "; with both limits reached, the later of the two",
        );
        BTreeMap::from([("429".to_owned(), RefOr::T(answer))])
    }
}

/// The advisory lock classes (the two-key form, a space apart from the one-key locks that
/// `migrate` takes). Every caller locks the client before the address, so two requests
/// never wait on each other in a circle.
pub const CLIENT_LOCK: i32 = 0x6763_0001;
pub const IP_LOCK: i32 = 0x6763_0002;

/// Wrong codes in the last hour, for the client and for the address, and for each the whole
/// seconds (rounded up) until the try that holds the count at its limit leaves the hour
/// (none while the count is below the limit).
#[derive(QueryableByName)]
struct Counts {
    #[diesel(sql_type = BigInt)]
    by_client: i64,
    #[diesel(sql_type = BigInt)]
    by_ip: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    client_frees_in: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    ip_frees_in: Option<i64>,
}

impl Counts {
    /// The wait when the client or the address is at its limit: until both would let the
    /// request through, so the later of the two.
    fn refusal(&self, limits: Limits) -> Option<RetryAfter> {
        let client =
            (self.by_client >= limits.per_client).then_some(self.client_frees_in.unwrap_or(0));
        let ip = (self.by_ip >= limits.per_ip).then_some(self.ip_frees_in.unwrap_or(0));
        client.max(ip).map(|wait| RetryAfter::seconds(Some(wait)))
    }
}

/// The counts and their waits, in one query by the database's clock: the `limit`-th newest
/// try of the client (of the address) is the one whose leaving drops the count below it.
async fn counts(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    ip: &str,
    limits: Limits,
) -> Result<Counts, OrderError> {
    Ok(diesel::sql_query(
        "SELECT count(*) FILTER (WHERE client_id = $1) AS by_client, \
                count(*) FILTER (WHERE ip = $2) AS by_ip, \
                ceil(extract(epoch FROM (array_agg(created_at ORDER BY created_at DESC) \
                  FILTER (WHERE client_id = $1))[$3] + interval '1 hour' - now()))::bigint \
                  AS client_frees_in, \
                ceil(extract(epoch FROM (array_agg(created_at ORDER BY created_at DESC) \
                  FILTER (WHERE ip = $2))[$4] + interval '1 hour' - now()))::bigint \
                  AS ip_frees_in \
         FROM gift_card_tries \
         WHERE created_at > now() - interval '1 hour' AND (client_id = $1 OR ip = $2)",
    )
    .bind::<BigInt, _>(client_id)
    .bind::<Text, _>(ip)
    .bind::<Integer, _>(as_index(limits.per_client))
    .bind::<Integer, _>(as_index(limits.per_ip))
    .get_result(conn)
    .await?)
}

/// A limit as an SQL array index (the configuration keeps limits far below `i32::MAX`).
fn as_index(limit: i64) -> i32 {
    i32::try_from(limit).unwrap_or(i32::MAX)
}

/// Takes the client's lock, then the address's, until the caller's transaction ends, then
/// refuses when this client or address is at its limit, saying when it may try again. While
/// the locks are held nobody
/// else can add to either count, so the count stays true until [`record_wrong`].
pub async fn lock_and_check(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    ip: &str,
    limits: Limits,
) -> Result<(), OrderError> {
    for (class, key) in [
        (CLIENT_LOCK, client_id.to_string()),
        (IP_LOCK, ip.to_owned()),
    ] {
        diesel::sql_query("SELECT pg_advisory_xact_lock($1, hashtext($2))")
            .bind::<Integer, _>(class)
            .bind::<Text, _>(key)
            .execute(conn)
            .await?;
    }
    match counts(conn, client_id, ip, limits).await?.refusal(limits) {
        Some(wait) => Err(OrderError::TooManyRequests(wait)),
        None => Ok(()),
    }
}

/// Counts a wrong code, in the transaction that holds the locks of [`lock_and_check`].
pub async fn record_wrong(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    ip: &str,
) -> Result<(), OrderError> {
    diesel::insert_into(gift_card_tries::table)
        .values((
            gift_card_tries::client_id.eq(client_id),
            gift_card_tries::ip.eq(ip),
        ))
        .execute(conn)
        .await?;
    Ok(())
}
