//! `point-service unsynced-orders`: the orders the sync gave up on past its horizon (still
//! open, a payment still undecided or unreadable at the payment service), for a person to
//! settle at the payment service; `--resolve <order> --note <text>` marks one done.

use chrono::{DateTime, SecondsFormat, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use crate::db::schema::{payment_syncs, point_orders};
use crate::payments::by_hand;

/// One listed order.
#[derive(Debug, Queryable)]
pub struct Listed {
    pub correlation_id: Uuid,
    pub payer_id: i64,
    pub money_amount: bigdecimal::BigDecimal,
    pub since: DateTime<Utc>,
    pub listed_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
}

pub const HEADER: &str = "order\tpayer\tamount\tlatest_attempt\tlisted_at\treason";

impl Listed {
    /// A tab-separated line: order, payer, amount, latest attempt, listed at, reason.
    pub fn line(&self) -> String {
        let time = |t: &DateTime<Utc>| t.to_rfc3339_opts(SecondsFormat::Secs, true);
        format!(
            "{}\t{}\t{} SAR\t{}\t{}\t{}",
            self.correlation_id,
            self.payer_id,
            self.money_amount,
            time(&self.since),
            self.listed_at.as_ref().map_or("-".to_owned(), time),
            self.last_error.as_deref().unwrap_or("-")
        )
    }
}

/// The listed orders not yet resolved, oldest first.
pub async fn open(conn: &mut AsyncPgConnection) -> QueryResult<Vec<Listed>> {
    payment_syncs::table
        .inner_join(point_orders::table)
        .filter(payment_syncs::listed_at.is_not_null())
        .filter(payment_syncs::resolved_at.is_null())
        .order((payment_syncs::listed_at, payment_syncs::correlation_id))
        .select((
            payment_syncs::correlation_id,
            point_orders::payer_id,
            point_orders::money_amount,
            payment_syncs::since,
            payment_syncs::listed_at,
            payment_syncs::last_error,
        ))
        .load(conn)
        .await
}

/// Marks a listed order resolved with `note`; `false` when it is not listed and open.
pub async fn resolve(conn: &mut AsyncPgConnection, order: Uuid, note: &str) -> QueryResult<bool> {
    let updated = diesel::update(
        payment_syncs::table
            .find(order)
            .filter(payment_syncs::listed_at.is_not_null())
            .filter(payment_syncs::resolved_at.is_null()),
    )
    .set((
        payment_syncs::resolved_at.eq(diesel::dsl::now),
        payment_syncs::resolution.eq(note),
    ))
    .execute(conn)
    .await?;
    Ok(updated == 1)
}

/// `point-service unsynced-orders [--resolve <order> --note <text>]`.
pub async fn command(
    database: &db::PoolSettings,
    resolve_order: Option<&str>,
    note: Option<&str>,
) -> Result<(), String> {
    let mut conn = db::connect(database)
        .await
        .map_err(|e| format!("cannot connect to the database: {e}"))?;
    if let Some(order) = resolve_order {
        let id = order
            .parse::<Uuid>()
            .map_err(|_| format!("{order} is not an order's correlation_id"))?;
        return by_hand::resolve(
            &mut conn,
            id,
            note,
            "--resolve needs --note <text>: what was found at the payment service and done",
            "no open listed order has correlation_id",
            resolve,
        )
        .await;
    }
    let listed = open(&mut conn).await.map_err(|e| e.to_string())?;
    by_hand::print_open(HEADER, &listed, Listed::line);
    Ok(())
}
