//! The wrong-code limits: so many wrong codes per client and per client address in the
//! last hour. A redemption takes two advisory locks (the client's, then the address's, as
//! the auth service's OTP limits do) before it counts, and holds them while it looks the
//! code up and records a wrong one, all in one short transaction: a burst of parallel
//! requests takes turns, so no code is looked at once the limit is reached (a right code
//! hidden among wrong ones gets no extra chances). This serialises one client's, and one
//! address's, redemptions; the locks are never held across the credit call.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use catalog_db::schema::gift_card_tries;

use crate::error::OrderError;

/// Wrong codes allowed per hour.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub per_client: i64,
    pub per_ip: i64,
}

/// The advisory lock classes (the two-key form, a space apart from the one-key locks that
/// `migrate` takes). Every caller locks the client before the address, so two requests
/// never wait on each other in a circle.
pub const CLIENT_LOCK: i32 = 0x6763_0001;
pub const IP_LOCK: i32 = 0x6763_0002;

#[derive(QueryableByName)]
struct Counts {
    #[diesel(sql_type = BigInt)]
    by_client: i64,
    #[diesel(sql_type = BigInt)]
    by_ip: i64,
}

async fn over(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    ip: &str,
    limits: Limits,
) -> Result<bool, OrderError> {
    let counts: Counts = diesel::sql_query(
        "SELECT count(*) FILTER (WHERE client_id = $1) AS by_client, \
                count(*) FILTER (WHERE ip = $2) AS by_ip \
         FROM gift_card_tries \
         WHERE created_at > now() - interval '1 hour' AND (client_id = $1 OR ip = $2)",
    )
    .bind::<BigInt, _>(client_id)
    .bind::<Text, _>(ip)
    .get_result(conn)
    .await?;
    Ok(counts.by_client >= limits.per_client || counts.by_ip >= limits.per_ip)
}

/// Takes the client's lock, then the address's, until the caller's transaction ends, then
/// refuses when this client or address is at its limit. While the locks are held nobody
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
    if over(conn, client_id, ip, limits).await? {
        return Err(OrderError::TooManyRequests);
    }
    Ok(())
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
