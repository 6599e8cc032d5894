//! When a client's points expire (no HTTP in here): the one rule that the balance answer
//! shows as `pointsExpirationDate` and that `point-service expire-points` executes, so the
//! date the app shows is the date the points go.
//!
//! The spec's rule: the Riyadh date of the client's newest `earn` entry plus the point
//! settings' inactivity days; no date when the settings say `never`, are unset, or the client
//! has no earn entry. Only `earn` entries count: a gift, a purchase, a credit or an expiry
//! leaves the date where it is. The points expire once that date has passed, on the next
//! Riyadh day: the date itself is the last day they can be spent.

use bigdecimal::BigDecimal;
use chrono::{DateTime, Days, NaiveDate, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Numeric, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::Points;

use crate::db::schema::{point_entries, point_settings};
use crate::riyadh;

/// Expiry as the point settings have it: on, after this many days without an earn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    inactivity_days: u64,
}

impl Policy {
    pub fn after_days(inactivity_days: u64) -> Self {
        Self { inactivity_days }
    }

    /// The settings' policy; `None` when they say `never` or are unset (nothing expires).
    pub async fn load(conn: &mut AsyncPgConnection) -> QueryResult<Option<Self>> {
        let settings: Option<(String, Option<i32>)> = point_settings::table
            .select((point_settings::expiry, point_settings::inactivity_days))
            .first(conn)
            .await
            .optional()?;
        Ok(match settings {
            Some((expiry, Some(days))) if expiry == "inactivity" => {
                u64::try_from(days).ok().map(Self::after_days)
            }
            _ => None,
        })
    }

    /// The expiry date of points whose newest earn is `newest_earn`; `None` past the end of
    /// the calendar (they never expire).
    pub fn expiry_date(self, newest_earn: DateTime<Utc>) -> Option<NaiveDate> {
        riyadh::date_of(newest_earn).checked_add_days(Days::new(self.inactivity_days))
    }

    /// The newest earns whose expiry date falls from `first` (`None`: any date) to `last`,
    /// both included: the instants `from <= earn < until` of the answer (an open end is
    /// `None`), or `None` when no earn can have such a date. Searches use it to find
    /// candidates by the newest-earn index; [`Self::expiry_date`] still decides each one,
    /// and a test checks that the two agree.
    pub fn earned_for(self, first: Option<NaiveDate>, last: NaiveDate) -> Option<EarnWindow> {
        let days = Days::new(self.inactivity_days);
        let latest_earn_date = last.checked_sub_days(days)?;
        let until = latest_earn_date.succ_opt().and_then(riyadh::day_start);
        let from = match first {
            None => None,
            Some(first) => match first.checked_sub_days(days) {
                Some(earliest_earn_date) => Some(riyadh::day_start(earliest_earn_date)?),
                None => None,
            },
        };
        Some(EarnWindow { from, until })
    }
}

/// Instants of newest earns, `from <= earn < until`; `None` is an open end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EarnWindow {
    pub from: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
}

impl EarnWindow {
    pub fn contains(&self, at: DateTime<Utc>) -> bool {
        self.from.is_none_or(|from| from <= at) && self.until.is_none_or(|until| at < until)
    }
}

/// A client's positive balance and its expiry date: what `expiring` lists before the date
/// and what `expire-points` takes (or, in a dry run, would take) after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientExpiry {
    pub client_id: i64,
    /// The last day the points can be spent.
    pub date: NaiveDate,
    /// The balance that expires (positive; the expiry entry is its negative).
    pub points: BigDecimal,
}

/// The header of the lines of [`ClientExpiry::line`].
pub const LINE_HEADER: &str = "client_id\texpiry_date\tpoints";

impl ClientExpiry {
    /// `client_id<TAB>expiry_date<TAB>points`.
    pub fn line(&self) -> String {
        format!(
            "{}\t{}\t{}",
            self.client_id,
            riyadh::text(self.date),
            Points::new(self.points.clone()).to_text()
        )
    }
}

/// Whether points with this expiry date are gone on `today`.
pub fn has_passed(expiry_date: NaiveDate, today: NaiveDate) -> bool {
    expiry_date < today
}

/// The reference of a client's expiry entry for an expiry date, written on `run_date` (the
/// entry's own Riyadh date): unique in the ledger, so a client's points expire at most once
/// a day for a date, however many runs or replicas try; a later day's run takes only what
/// arrived since (the migration checks the form, the audit the dates).
pub fn reference(client_id: i64, expiry_date: NaiveDate, run_date: NaiveDate) -> String {
    format!(
        "expiry:{client_id}:{}:{}",
        riyadh::text(expiry_date),
        riyadh::text(run_date)
    )
}

/// The newest earn entry's time, by the newest-earn index.
pub async fn newest_earn(
    conn: &mut AsyncPgConnection,
    client_id: i64,
) -> QueryResult<Option<DateTime<Utc>>> {
    point_entries::table
        .filter(
            point_entries::client_id
                .eq(client_id)
                .and(point_entries::kind.eq("earn")),
        )
        .select(diesel::dsl::max(point_entries::created_at))
        .first(conn)
        .await
}

/// A client's expiry date as the settings and the ledger have it now: what the balance
/// answers and what `expire-points` acts on.
pub async fn date(conn: &mut AsyncPgConnection, client_id: i64) -> QueryResult<Option<NaiveDate>> {
    let Some(policy) = Policy::load(conn).await? else {
        return Ok(None);
    };
    Ok(newest_earn(conn, client_id)
        .await?
        .and_then(|earned| policy.expiry_date(earned)))
}

/// A client holding points, with its newest earn.
#[derive(Debug, QueryableByName)]
pub struct Holder {
    #[diesel(sql_type = BigInt)]
    pub client_id: i64,
    #[diesel(sql_type = Numeric)]
    pub balance: BigDecimal,
    #[diesel(sql_type = Timestamptz)]
    pub newest_earn: DateTime<Utc>,
}

/// Up to `limit` clients after `after` (by id) with a positive balance and a newest earn in
/// `window`, in id order: a page of a keyset walk, so that no query or transaction spans
/// all clients. The accounts are read in key order and each one's newest earn is one probe
/// of the newest-earn index, never a scan of its entries.
pub async fn holders(
    conn: &mut AsyncPgConnection,
    window: EarnWindow,
    after: i64,
    limit: i64,
) -> QueryResult<Vec<Holder>> {
    diesel::sql_query(
        "SELECT a.client_id, a.balance, newest.created_at AS newest_earn
         FROM point_accounts a
         CROSS JOIN LATERAL (
             SELECT e.created_at FROM point_entries e
             WHERE e.client_id = a.client_id AND e.kind = 'earn'
             ORDER BY e.created_at DESC LIMIT 1
         ) newest
         WHERE a.client_id > $1 AND a.balance > 0
           AND ($2::timestamptz IS NULL OR newest.created_at >= $2)
           AND ($3::timestamptz IS NULL OR newest.created_at < $3)
         ORDER BY a.client_id
         LIMIT $4",
    )
    .bind::<BigInt, _>(after)
    .bind::<Nullable<Timestamptz>, _>(window.from)
    .bind::<Nullable<Timestamptz>, _>(window.until)
    .bind::<BigInt, _>(limit)
    .load(conn)
    .await
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn expiry_counts_from_the_riyadh_date_of_the_newest_earn() {
        // 22:00 UTC on 31 Dec is already 1 Jan in Riyadh (UTC+3).
        let earned = "2026-12-31T22:00:00Z".parse::<DateTime<Utc>>().unwrap();
        assert_eq!(
            Policy::after_days(365).expiry_date(earned),
            Some(date(2028, 1, 1))
        );
        assert_eq!(
            Policy::after_days(0).expiry_date(earned),
            Some(date(2027, 1, 1))
        );
    }

    #[test]
    fn points_go_the_day_after_their_date() {
        assert!(!has_passed(date(2027, 4, 1), date(2027, 4, 1)));
        assert!(has_passed(date(2027, 4, 1), date(2027, 4, 2)));
        assert_eq!(
            reference(1001, date(2027, 4, 1), date(2027, 4, 2)),
            "expiry:1001:2027-04-01:2027-04-02"
        );
    }

    #[test]
    fn the_window_of_a_date_is_its_riyadh_earn_day() {
        let window = Policy::after_days(10)
            .earned_for(Some(date(2027, 4, 11)), date(2027, 4, 11))
            .unwrap();
        assert_eq!(window.from, Some("2027-03-31T21:00:00Z".parse().unwrap()));
        assert_eq!(window.until, Some("2027-04-01T21:00:00Z".parse().unwrap()));
    }

    proptest! {
        /// The search windows find exactly the earns whose expiry date the rule puts in
        /// range, around the 21:00 UTC day boundary above all.
        #[test]
        fn the_window_agrees_with_the_rule(
            day in 0i64..3000,
            second in prop_oneof![0i64..86_400, 75_590i64..75_610],
            days in 0u64..800,
            open_start in any::<bool>(),
            first_offset in -3i64..3,
            span in 0i64..3,
        ) {
            let base: DateTime<Utc> = "2024-01-01T00:00:00Z".parse().unwrap();
            let earned = base + chrono::Duration::days(day) + chrono::Duration::seconds(second);
            let policy = Policy::after_days(days);
            let expiry = policy.expiry_date(earned).unwrap();
            // Ranges that start or end at the expiry date or a day either side of it.
            let first = expiry + chrono::Duration::days(first_offset);
            let last = first + chrono::Duration::days(span);
            let first = (!open_start).then_some(first);
            let in_range = first.is_none_or(|f| f <= expiry) && expiry <= last;
            let found = policy.earned_for(first, last).is_some_and(|w| w.contains(earned));
            prop_assert_eq!(found, in_range);
        }
    }
}
