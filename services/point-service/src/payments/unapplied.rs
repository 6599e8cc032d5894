//! Captures that took a client's money without giving points (no HTTP in here): the record
//! the webhook writes, and `point-service unapplied-captures`, the list whoever refunds
//! works from. Refunds are made by hand at the payment service; `--resolve <event id>
//! --note <text>` then marks one done, with the note (a refund reference, who did it).

use bigdecimal::BigDecimal;
use chrono::{DateTime, SecondsFormat, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use crate::db::schema::unapplied_captures;
use crate::error::PointError;
use crate::payments::by_hand;
use crate::payments::machine::Unapplied;

/// A capture to list: what its event said, as far as it could be read.
#[derive(Debug)]
pub struct Listing<'a> {
    pub event_id: &'a str,
    /// The reference as recorded with the event (canonical when it is a UUID).
    pub reference: &'a str,
    /// The order, only when it exists (the column references the orders).
    pub order: Option<Uuid>,
    pub payment_id: Option<&'a str>,
    pub amount_minor: Option<i64>,
    pub currency: Option<&'a str>,
    pub reason: Unapplied,
}

/// Lists a capture; `false` when its payment is already listed (the same payment captured
/// again under another event id is no second charge).
pub async fn record(
    conn: &mut AsyncPgConnection,
    listing: &Listing<'_>,
) -> Result<bool, PointError> {
    let inserted = diesel::insert_into(unapplied_captures::table)
        .values((
            unapplied_captures::event_id.eq(listing.event_id),
            unapplied_captures::reference.eq(listing.reference),
            unapplied_captures::correlation_id.eq(listing.order),
            unapplied_captures::payment_id.eq(listing.payment_id),
            unapplied_captures::amount_minor.eq(listing.amount_minor),
            unapplied_captures::currency.eq(listing.currency),
            unapplied_captures::reason.eq(listing.reason.as_str()),
        ))
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    Ok(inserted == 1)
}

/// One open unapplied capture.
#[derive(Debug, Queryable)]
pub struct Open {
    pub event_id: String,
    pub reference: String,
    pub payment_id: Option<String>,
    pub amount_minor: Option<i64>,
    pub currency: Option<String>,
    pub reason: String,
    pub recorded_at: DateTime<Utc>,
}

impl Open {
    /// `15.00 SAR` from 1500 halalas; `-` for what the event did not say.
    fn amount(&self) -> String {
        let amount = self
            .amount_minor
            .map_or("-".to_owned(), |m| BigDecimal::new(m.into(), 2).to_string());
        format!("{amount} {}", self.currency.as_deref().unwrap_or("-"))
    }

    /// A tab-separated line: event, order, payment, amount, reason, time.
    pub fn line(&self) -> String {
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}",
            self.event_id,
            self.reference,
            self.payment_id.as_deref().unwrap_or("-"),
            self.amount(),
            self.reason,
            self.recorded_at.to_rfc3339_opts(SecondsFormat::Secs, true)
        )
    }
}

pub const HEADER: &str = "event_id\torder\tpayment_id\tamount\treason\trecorded_at";

/// The open ones, oldest first.
pub async fn open(conn: &mut AsyncPgConnection) -> QueryResult<Vec<Open>> {
    unapplied_captures::table
        .filter(unapplied_captures::resolved_at.is_null())
        .order((
            unapplied_captures::recorded_at,
            unapplied_captures::event_id,
        ))
        .select((
            unapplied_captures::event_id,
            unapplied_captures::reference,
            unapplied_captures::payment_id,
            unapplied_captures::amount_minor,
            unapplied_captures::currency,
            unapplied_captures::reason,
            unapplied_captures::recorded_at,
        ))
        .load(conn)
        .await
}

/// How many are open.
pub async fn open_count(conn: &mut AsyncPgConnection) -> QueryResult<i64> {
    unapplied_captures::table
        .filter(unapplied_captures::resolved_at.is_null())
        .count()
        .get_result(conn)
        .await
}

/// Marks an open one resolved with `note`; `false` when there is no open one with that id.
pub async fn resolve(
    conn: &mut AsyncPgConnection,
    event_id: &str,
    note: &str,
) -> QueryResult<bool> {
    let updated = diesel::update(
        unapplied_captures::table
            .find(event_id)
            .filter(unapplied_captures::resolved_at.is_null()),
    )
    .set((
        unapplied_captures::resolved_at.eq(diesel::dsl::now),
        unapplied_captures::resolution.eq(note),
    ))
    .execute(conn)
    .await?;
    Ok(updated == 1)
}

/// `point-service unapplied-captures [--resolve <event id> --note <text>]` on the database
/// of `database`.
pub async fn command(
    database: &db::PoolSettings,
    resolve_event: Option<&str>,
    note: Option<&str>,
) -> Result<(), String> {
    let mut conn = db::connect(database)
        .await
        .map_err(|e| format!("cannot connect to the database: {e}"))?;
    if let Some(event_id) = resolve_event {
        return by_hand::resolve(
            &mut conn,
            event_id,
            note,
            "--resolve needs --note <text>: the refund's reference or who made it",
            "no open unapplied capture has event id",
            resolve,
        )
        .await;
    }
    let open = open(&mut conn).await.map_err(|e| e.to_string())?;
    by_hand::print_open(HEADER, &open, Open::line);
    Ok(())
}
