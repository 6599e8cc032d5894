//! "Points expiring soon": for each notice of `EXPIRY_NOTICE_DAYS` (default 7 and 1, in days
//! before the date), the clients whose positive balance expires that many days from today get
//! one `points.expiring` event for that date and notice, with the points that would expire.
//! Run by `expire-points` after it has expired what had passed, so the daily job sends them.
//!
//! Each notice covers the days from itself down to the next smaller one: with 7 and 1, the
//! 7-day notice goes to a date 2 to 7 days ahead, the 1-day notice to a date 0 or 1 day ahead
//! (the last day included). A date the job first sees inside a band (the job missed days, a
//! client's date moved there, the notices were just switched on) gets that band's notice
//! then, never a larger one late, and never one for a date that has passed.
//!
//! Once per client, expiry date and notice however often it runs: each is a row of
//! `expiry_notices`, whose key refuses a second, and whose trigger writes the event in the
//! same transaction. The row is written under the client's account lock, after the date, the
//! balance and today are read again under it: the event is in commit order with the client's
//! other events (it carries the client's newest ledger entry id, `asOfEntryId`, for consumers
//! who order by entry), and a client who earned (moving the date) or spent everything since
//! the search gets none.
//!
//! A notice says nothing when it stops applying (an earn moves the date, the policy changes):
//! the next `points.credited` event, or the balance, says it.

use bigdecimal::{BigDecimal, Zero};
use chrono::NaiveDate;
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Date, Integer, Numeric};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use crate::expiry::{report, rule};
use crate::{ledger, riyadh};

/// The variable that lists the notices, in days before the date.
pub const VARIABLE: &str = "EXPIRY_NOTICE_DAYS";
pub const DEFAULT_DAYS: [u32; 2] = [7, 1];

/// The notices `EXPIRY_NOTICE_DAYS` lists, largest first: comma-separated whole days from 0 to
/// 365 (digits only), each once; empty or only spaces: no notices; unset: [`DEFAULT_DAYS`].
pub fn days_from_env() -> Result<Vec<u32>, String> {
    match std::env::var(VARIABLE) {
        Ok(value) => days_from(Some(&value)),
        Err(std::env::VarError::NotPresent) => days_from(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{VARIABLE} is not UTF-8 text")),
    }
}

/// [`days_from_env`] of a value.
pub fn days_from(value: Option<&str>) -> Result<Vec<u32>, String> {
    let Some(value) = value else {
        return Ok(DEFAULT_DAYS.to_vec());
    };
    if value.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut days = Vec::new();
    for part in value.split(',').map(str::trim) {
        let day = Some(part)
            .filter(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|part| part.parse::<u32>().ok())
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
    days.sort_unstable_by(|a, b| b.cmp(a));
    Ok(days)
}

/// What a run of the notices wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Per notice (days before), the events written.
    pub by_notice: Vec<(u32, u64)>,
}

/// The days ahead a notice covers: from one past the next smaller notice up to its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Band {
    notice: u32,
    nearest: u32,
}

/// Writes the notices due today (the database's Riyadh date) for each of `days`, largest
/// first.
pub async fn write(conn: &mut AsyncPgConnection, days: &[u32]) -> diesel::QueryResult<Written> {
    let mut days = days.to_vec();
    days.sort_unstable_by(|a, b| b.cmp(a));
    days.dedup();
    let today = riyadh::today(conn).await?;
    let mut written = Written::default();
    for (i, &notice) in days.iter().enumerate() {
        let nearest = days.get(i + 1).map_or(0, |smaller| smaller + 1);
        let band = Band { notice, nearest };
        let mut due = Vec::new();
        report::each(conn, today, u64::from(notice), |expiry| {
            if days_ahead(today, expiry.date) >= i64::from(nearest) {
                due.push(expiry.client_id);
            }
        })
        .await?;
        let mut count = 0;
        for client_id in due {
            if write_one(conn, client_id, band).await? {
                count += 1;
            }
        }
        written.by_notice.push((notice, count));
    }
    Ok(written)
}

fn days_ahead(today: NaiveDate, date: NaiveDate) -> i64 {
    (date - today).num_days()
}

#[derive(QueryableByName)]
struct Newest {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// One client's notice, in a transaction of its own under its account's lock; false when it
/// is not due any more or was written before.
async fn write_one(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    band: Band,
) -> diesel::QueryResult<bool> {
    conn.transaction(async |conn| {
        let account = ledger::lock_account(conn, client_id).await?;
        let Some(date) = rule::date(conn, client_id).await? else {
            return Ok(false);
        };
        let ahead = days_ahead(riyadh::today_by_the_clock(conn).await?, date);
        let points = account.balance().clone();
        if ahead < i64::from(band.nearest) || ahead > i64::from(band.notice) || points <= BigDecimal::zero() {
            return Ok(false);
        }
        let newest: Newest = diesel::sql_query(
            "SELECT COALESCE(max(id), 0) AS id FROM point_entries WHERE client_id = $1",
        )
        .bind::<BigInt, _>(client_id)
        .get_result(conn)
        .await?;
        let inserted = diesel::sql_query(
            "INSERT INTO expiry_notices (client_id, expiry_date, days_before, points, as_of_entry_id) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        )
        .bind::<BigInt, _>(client_id)
        .bind::<Date, _>(date)
        .bind::<Integer, _>(i32::try_from(band.notice).unwrap_or(i32::MAX))
        .bind::<Numeric, _>(points)
        .bind::<BigInt, _>(newest.id)
        .execute(conn)
        .await?;
        Ok(inserted == 1)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_reads_digits_only_each_once_largest_first() {
        assert_eq!(days_from(None), Ok(vec![7, 1]));
        assert_eq!(days_from(Some("1, 7,0")), Ok(vec![7, 1, 0]));
        assert_eq!(days_from(Some("365")), Ok(vec![365]));
        for off in ["", "  "] {
            assert_eq!(days_from(Some(off)), Ok(vec![]), "{off:?}");
        }
        for bad in ["7,x", "366", "1,1", "-1", "+7", "7,,1", " , ", "1.5", "٣"] {
            assert!(days_from(Some(bad)).is_err(), "{bad:?}");
        }
    }
}
