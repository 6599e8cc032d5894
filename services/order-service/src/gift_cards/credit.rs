//! One try at crediting a redemption, by whoever holds its lease (the redeeming request or
//! a replica's retry task): the lease is taken in a short statement, the credit call goes
//! out with no database connection held, and the outcome is written back.
//!
//! Where the credit goes (the point service or the legacy system) and the reference it
//! goes under are the redemption's own, stored when it is made: every try sends that
//! reference there, whatever `USE_POINT_SERVICE` says by then or on the replica making the
//! try, so a credit retried after the switch never lands in the other ledger too. A legacy
//! redemption tried by a process without `LEGACY_URL` is not sent anywhere: it stays
//! pending, logged at error level, until a process with the URL credits it.
//!
//! The reference is `gift-card:<code>` (the code as stored, unique and redeemed once,
//! ever), not a database counter that a catalog restored from a backup could hand out
//! again; redemptions made before references were stored keep the `gift-card:<id>` they
//! were first sent under. The call is safe to repeat: the point service applies a
//! reference once and answers the first result again, and the legacy call carries the
//! reference in its body and as `Idempotency-Key`. So a holder that dies after the call but
//! before writing it down costs nothing but a second call after its lease runs out.
//!
//! Each concern has its file: taking and giving back the lease and writing the outcome down
//! (`leases`), the call itself (`send`), and its logs and counts (`report`).

mod leases;
mod report;
mod send;

use bigdecimal::BigDecimal;
use diesel::deserialize::{self, FromSql};
use diesel::pg::{Pg, PgValue};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Numeric, Text};

pub use leases::{credited, release, take_due, take_locked, take_new};
pub use report::report;
pub use send::{Failure, REFUSED_BACKOFF, send};

/// Where a redemption is credited: its `credit_target` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreditTarget {
    /// The point service's `/internal/v1/credits`.
    PointService,
    /// The legacy add-point call, `POST {LEGACY_URL}/api/v1/points/add`.
    Legacy,
}

impl CreditTarget {
    /// As stored in `credit_target`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PointService => "point_service",
            Self::Legacy => "legacy",
        }
    }
}

impl FromSql<Text, Pg> for CreditTarget {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        match <String as FromSql<Text, Pg>>::from_sql(value)?.as_str() {
            "point_service" => Ok(Self::PointService),
            "legacy" => Ok(Self::Legacy),
            other => Err(format!("unknown gift-card credit target {other:?}").into()),
        }
    }
}

/// The reference a new redemption of `code` (as stored in `gift_card_codes`) is credited
/// under, on every try.
pub fn reference_of(code: &str) -> String {
    format!("gift-card:{code}")
}

/// A redemption whose lease this process holds: it may send the credit now.
#[derive(Debug, QueryableByName)]
pub struct Lease {
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    #[diesel(sql_type = BigInt)]
    pub client_id: i64,
    #[diesel(sql_type = Numeric)]
    pub points: BigDecimal,
    /// The redemption's attempt count once this lease was taken: it fences this holder's
    /// release, which applies only while no later holder has taken the lease.
    #[diesel(sql_type = Integer)]
    pub attempt: i32,
    /// Where the credit goes, on every try.
    #[diesel(sql_type = Text, column_name = credit_target)]
    pub target: CreditTarget,
    /// What the credit is known by on the other side, on every try.
    #[diesel(sql_type = Text, column_name = credit_reference)]
    pub reference: String,
}

/// Who tries a credit, for the logs and the metrics.
#[derive(Debug, Clone, Copy)]
pub enum By {
    Request,
    Retry,
}

impl By {
    fn label(self) -> &'static str {
        match self {
            Self::Request => "request",
            Self::Retry => "retry",
        }
    }
}
