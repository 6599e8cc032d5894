//! What the next expiry run would take under a policy: the back office's dry run of a new
//! expiry policy, and the figures a change that takes points must confirm
//! (`back_office::expiry_policy`). The clients holding points whose expiry date under it has
//! passed by tomorrow's Riyadh date, and their whole balances: the rule the run executes
//! (`rule`), on the accounts as they are now. Nothing is locked or written.

use bigdecimal::{BigDecimal, Zero};
use chrono::NaiveDate;
use diesel::QueryResult;
use diesel_async::AsyncPgConnection;

use crate::expiry::rule::{self, Policy};
use crate::riyadh;

/// Clients read per query of the walk.
const PAGE: i64 = 1000;

/// The next run's take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Take {
    /// The Riyadh date of the run counted: tomorrow's, which takes every date passed by then.
    pub as_of: NaiveDate,
    pub clients: i64,
    pub points: BigDecimal,
}

/// What a run on tomorrow's Riyadh date would take under `policy` (`None`: nothing expires).
pub async fn next_run(conn: &mut AsyncPgConnection, policy: Option<Policy>) -> QueryResult<Take> {
    let today = riyadh::today(conn).await?;
    let as_of = today.succ_opt().unwrap_or(today);
    let mut take = Take {
        as_of,
        clients: 0,
        points: BigDecimal::zero(),
    };
    // Dates that have passed on `as_of` are today's and before.
    let Some(window) = policy.and_then(|policy| policy.earned_for(None, today)) else {
        return Ok(take);
    };
    let mut after = 0;
    loop {
        let page = rule::holders(conn, window, after, PAGE).await?;
        let Some(last) = page.last() else {
            return Ok(take);
        };
        after = last.client_id;
        for holder in &page {
            // The rule decides each one, as the run does; the window only finds them.
            let passed = policy
                .and_then(|policy| policy.expiry_date(holder.newest_earn))
                .is_some_and(|date| rule::has_passed(date, as_of));
            if passed {
                take.clients += 1;
                take.points += &holder.balance;
            }
        }
    }
}
