//! Dates in Asia/Riyadh, the zone every date of the points programme is in (the balance's
//! `pointsExpirationDate`, the day expiry runs on, a liability report's period). Riyadh
//! keeps UTC+3 all year, so a Riyadh day runs from 21:00 UTC the evening before.
//!
//! "Today" comes from the database's clock, the one that stamps every ledger entry, so that
//! replicas with drifting clocks agree on the day, and on the day of the entries they compare.

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
use chrono_tz::Asia::Riyadh;
use diesel::sql_types::Timestamptz;
use diesel::{QueryResult, QueryableByName};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// The Riyadh date of an instant.
pub fn date_of(at: DateTime<Utc>) -> NaiveDate {
    at.with_timezone(&Riyadh).date_naive()
}

/// The instant a Riyadh date begins; `None` only where chrono cannot write that instant
/// (Riyadh has no daylight saving, so every date has its midnight).
pub fn day_start(date: NaiveDate) -> Option<DateTime<Utc>> {
    date.and_time(NaiveTime::MIN)
        .and_local_timezone(Riyadh)
        .earliest()
        .map(|at| at.with_timezone(&Utc))
}

/// `YYYY-MM-DD`, the spec's date text.
pub fn text(date: NaiveDate) -> String {
    date.format("%Y-%m-%d").to_string()
}

#[derive(QueryableByName)]
struct Now {
    #[diesel(sql_type = Timestamptz)]
    now: DateTime<Utc>,
}

/// Today's Riyadh date by the database's clock.
pub async fn today(conn: &mut AsyncPgConnection) -> QueryResult<NaiveDate> {
    let now: Now = diesel::sql_query("SELECT now() AS now")
        .get_result(conn)
        .await?;
    Ok(date_of(now.now))
}

/// Today's Riyadh date by the database's clock as it reads now (`clock_timestamp()`), not as
/// the transaction began: for a decision taken after waiting on a lock.
pub async fn today_by_the_clock(conn: &mut AsyncPgConnection) -> QueryResult<NaiveDate> {
    let now: Now = diesel::sql_query("SELECT clock_timestamp() AS now")
        .get_result(conn)
        .await?;
    Ok(date_of(now.now))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    #[test]
    fn a_riyadh_day_begins_at_21_utc_the_evening_before() {
        let day = NaiveDate::from_ymd_opt(2027, 4, 2).unwrap();
        assert_eq!(day_start(day), Some(at("2027-04-01T21:00:00Z")));
        assert_eq!(
            date_of(at("2027-04-01T20:59:59.999999Z")),
            NaiveDate::from_ymd_opt(2027, 4, 1).unwrap()
        );
        assert_eq!(date_of(at("2027-04-01T21:00:00Z")), day);
        assert_eq!(text(day), "2027-04-02");
    }
}
