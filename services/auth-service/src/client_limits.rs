//! Per-client limits on what a signed-in client can repeat: client lookups by phone (so the
//! lookup cannot list who is a client) and legacy tokens minted by exchange-token (each one
//! is a stored row). Counted in PostgreSQL, per client and rolling hour, so that every
//! replica shares one count; an advisory lock per client and kind makes concurrent requests
//! take turns, so a parallel burst cannot all pass the count together (the OTP limits'
//! serialisation).

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use envelope::RetryAfter;

use crate::db::schema::client_events;
use crate::error::AuthError;

const WINDOW: &str = "1 hour";

envelope::refusals! {
    /// Why the client lookup by phone refuses a caller at its limit.
    pub enum LookupLimit in A {
        /// `CLIENT_LOOKUPS_PER_CLIENT_PER_HOUR` lookups in the last hour, found or not.
        TooManyLookups => 429, "Too many client lookups, try again later";
    }
}

envelope::refusals! {
    /// Why exchange-token refuses to mint a legacy token for a client at its limit.
    pub enum TokenLimit in A {
        /// `LEGACY_TOKENS_PER_CLIENT_PER_HOUR` legacy tokens minted in the last hour.
        TooManyTokens => 429, "Too many tokens requested, try again later";
    }
}

/// The limits, per client and rolling hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientLimits {
    pub lookups_per_hour: i64,
    pub legacy_tokens_per_hour: i64,
}

/// What a limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// `GET /api/v1/clients?contact_phone=`, found or not (misses are what a scan makes).
    Lookup,
    /// A legacy token minted by exchange-token.
    LegacyToken,
}

impl Counted {
    fn kind(self) -> &'static str {
        match self {
            Self::Lookup => "client_lookup",
            Self::LegacyToken => "legacy_token",
        }
    }

    fn limit(self, limits: &ClientLimits) -> i64 {
        match self {
            Self::Lookup => limits.lookups_per_hour,
            Self::LegacyToken => limits.legacy_tokens_per_hour,
        }
    }

    /// Made where the limit refuses.
    #[track_caller]
    fn refusal(self, wait: RetryAfter) -> AuthError {
        match self {
            Self::Lookup => AuthError::limited(LookupLimit::TooManyLookups, wait),
            Self::LegacyToken => AuthError::limited(TokenLimit::TooManyTokens, wait),
        }
    }
}

/// One client's rows of one kind in the window, and the whole seconds until the one that
/// holds the count at the limit leaves it (none below the limit).
#[derive(QueryableByName)]
struct Window {
    #[diesel(sql_type = BigInt)]
    recent: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    frees_in: Option<i64>,
}

/// Counts one `what` for `client_id`, or refuses with 429 when the last hour already holds
/// the limit. Must run inside the transaction that does the counted work: the lock and the
/// new row last until it ends, so a refused or failed request counts nothing.
pub async fn take(
    conn: &mut AsyncPgConnection,
    limits: &ClientLimits,
    what: Counted,
    client_id: i64,
) -> Result<(), AuthError> {
    let kind = what.kind();
    diesel::sql_query(
        "SELECT pg_advisory_xact_lock(hashtext('client:' || $1 || ':' || $2)::bigint)",
    )
    .bind::<Text, _>(kind)
    .bind::<BigInt, _>(client_id)
    .execute(conn)
    .await?;
    // This client's rows that left the window go first, so the table keeps at most one
    // window of rows per client and kind.
    diesel::sql_query(format!(
        "DELETE FROM client_events WHERE kind = $1 AND client_id = $2 \
         AND created_at <= now() - interval '{WINDOW}'"
    ))
    .bind::<Text, _>(kind)
    .bind::<BigInt, _>(client_id)
    .execute(conn)
    .await?;
    // What is left is the window. Past the limit the request passes once the limit-th
    // newest row has left it, an hour after it was made: that is the refusal's wait.
    let limit = what.limit(limits);
    let window: Window = diesel::sql_query(format!(
        "SELECT count(*) AS recent, ceil(extract(epoch FROM \
           (array_agg(created_at ORDER BY created_at DESC))[$3] + interval '{WINDOW}' - now()) \
         )::bigint AS frees_in \
         FROM client_events WHERE kind = $1 AND client_id = $2"
    ))
    .bind::<Text, _>(kind)
    .bind::<BigInt, _>(client_id)
    .bind::<Integer, _>(i32::try_from(limit).unwrap_or(i32::MAX))
    .get_result(conn)
    .await?;
    if window.recent >= limit {
        return Err(what.refusal(RetryAfter::seconds(window.frees_in)));
    }
    diesel::insert_into(client_events::table)
        .values((
            client_events::kind.eq(kind),
            client_events::client_id.eq(client_id),
        ))
        .execute(conn)
        .await?;
    Ok(())
}
