//! `point-service expiring --days N`: the clients whose points expire soon, for reminders.
//! "Expire in the next N days" is an expiry date from today to today + N, both included (N
//! = 0 lists the clients whose last day is today); dates that have already passed are the
//! business of `expire-points`, not of a reminder. Dates come from `expiry::rule`, the rule the
//! balance answers.

use chrono::{Days, NaiveDate};
use diesel::QueryResult;
use diesel_async::AsyncPgConnection;

use crate::expiry::rule::{self, ClientExpiry, LINE_HEADER, Policy};
use crate::riyadh;

/// Clients per page of the search.
const PAGE: i64 = 1000;

/// Every client with a positive balance whose expiry date is from `today` to `today + days`,
/// in client id order, a page at a time to `each`. Nothing when expiry is off.
pub async fn each(
    conn: &mut AsyncPgConnection,
    today: NaiveDate,
    days: u64,
    mut each: impl FnMut(ClientExpiry),
) -> QueryResult<()> {
    let Some(policy) = Policy::load(conn).await? else {
        return Ok(());
    };
    let last = today
        .checked_add_days(Days::new(days))
        .unwrap_or(NaiveDate::MAX);
    let Some(window) = policy.earned_for(Some(today), last) else {
        return Ok(());
    };
    let mut after = 0;
    loop {
        let page = rule::holders(conn, window, after, PAGE).await?;
        let Some(tail) = page.last() else {
            return Ok(());
        };
        after = tail.client_id;
        for holder in page {
            let date = policy.expiry_date(holder.newest_earn);
            if let Some(date) = date.filter(|date| (today..=last).contains(date)) {
                each(ClientExpiry {
                    client_id: holder.client_id,
                    date,
                    points: holder.balance,
                });
            }
        }
    }
}

/// `point-service expiring --days N [--today D]` on the database of `database`: a header, one
/// line per client.
pub async fn command(
    database: &db::PoolSettings,
    days: u64,
    today: Option<NaiveDate>,
) -> Result<(), String> {
    let mut conn = db::connect(database)
        .await
        .map_err(|e| format!("cannot connect to the database: {e}"))?;
    let today = match today {
        Some(today) => today,
        None => riyadh::today(&mut conn).await.map_err(|e| e.to_string())?,
    };
    println!("{LINE_HEADER}");
    let mut count = 0u64;
    each(&mut conn, today, days, |expiring| {
        count += 1;
        println!("{}", expiring.line());
    })
    .await
    .map_err(|e| e.to_string())?;
    tracing::info!(clients = count, days, "expiring: listed");
    Ok(())
}
