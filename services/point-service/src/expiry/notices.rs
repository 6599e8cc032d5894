//! "Points expiring soon": for each notice of `EXPIRY_NOTICE_DAYS` (default 7 and 1), every
//! client whose positive balance expires within that many days (an expiry date from today to
//! today + N, both included, as `point-service expiring --days N` lists them) gets one
//! `points.expiring` event for that date and notice, with the points that would expire. Run by
//! `expire-points` after it has expired what had passed, so the daily job sends them, and a
//! day it missed is caught up the next (a 7-day notice then comes 6 days before).
//!
//! Once per client, expiry date and notice however often it runs: each is a row of
//! `expiry_notices`, whose key refuses a second, and whose trigger writes the event in the same
//! transaction. The row is written under the client's account lock, after the date and the
//! balance are read again under it, like an expiry: the event is in commit order with the
//! client's other events, and a client that earned (moving the date) or spent everything
//! since the search gets none.

use bigdecimal::{BigDecimal, Zero};
use chrono::{Days, NaiveDate};
use diesel::sql_types::{BigInt, Date, Integer, Numeric};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use crate::expiry::{report, rule};
use crate::ledger;

/// The variable that lists the notices, in days before the date.
pub const VARIABLE: &str = "EXPIRY_NOTICE_DAYS";
pub const DEFAULT_DAYS: [u32; 2] = [7, 1];

/// `EXPIRY_NOTICE_DAYS`: comma-separated whole days from 0 to 365, each once (`7,1`; empty:
/// no notices); unset, [`DEFAULT_DAYS`].
pub fn days_from(value: Option<&str>) -> Result<Vec<u32>, String> {
    let Some(value) = value else {
        return Ok(DEFAULT_DAYS.to_vec());
    };
    let mut days = Vec::new();
    for part in value
        .split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
    {
        let day = part
            .parse::<u32>()
            .ok()
            .filter(|day| *day <= 365)
            .ok_or_else(|| {
                format!(
                    "{VARIABLE}={value:?}: {part:?} is not a whole number of days from 0 to 365"
                )
            })?;
        if days.contains(&day) {
            return Err(format!("{VARIABLE}={value:?}: {day} is listed twice"));
        }
        days.push(day);
    }
    Ok(days)
}

/// What a run of the notices wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Per notice (days before), the events written.
    pub by_notice: Vec<(u32, u64)>,
}

/// Writes the notices due as of `today` (the run's Riyadh date) for each of `days`.
pub async fn write(
    conn: &mut AsyncPgConnection,
    today: NaiveDate,
    days: &[u32],
) -> diesel::QueryResult<Written> {
    let mut written = Written::default();
    for &notice in days {
        let mut due = Vec::new();
        report::each(conn, today, u64::from(notice), |expiry| {
            due.push(expiry.client_id)
        })
        .await?;
        let mut count = 0;
        for client_id in due {
            if write_one(conn, client_id, today, notice).await? {
                count += 1;
            }
        }
        written.by_notice.push((notice, count));
    }
    Ok(written)
}

/// One client's notice, in a transaction of its own under its account's lock; false when it
/// is not due any more or was written before.
async fn write_one(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    today: NaiveDate,
    notice: u32,
) -> diesel::QueryResult<bool> {
    conn.transaction(async |conn| {
        let account = ledger::lock_account(conn, client_id).await?;
        let Some(date) = rule::date(conn, client_id).await? else {
            return Ok(false);
        };
        let last = today
            .checked_add_days(Days::new(u64::from(notice)))
            .unwrap_or(NaiveDate::MAX);
        let points = account.balance().clone();
        if !(today..=last).contains(&date) || points <= BigDecimal::zero() {
            return Ok(false);
        }
        let inserted = diesel::sql_query(
            "INSERT INTO expiry_notices (client_id, expiry_date, days_before, points) \
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        )
        .bind::<BigInt, _>(client_id)
        .bind::<Date, _>(date)
        .bind::<Integer, _>(i32::try_from(notice).unwrap_or(i32::MAX))
        .bind::<Numeric, _>(points)
        .execute(conn)
        .await?;
        Ok(inserted == 1)
    })
    .await
}
