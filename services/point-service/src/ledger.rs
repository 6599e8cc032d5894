//! The points ledger (no HTTP in here): an account per client and append-only entries. A
//! balance is the sum of the account's entries; the account's `balance` column caches it
//! and changes only in the transaction that appends an entry. A spend locks the accounts it
//! touches (`FOR UPDATE`, in id order, so two transfers between the same clients cannot
//! deadlock) before it reads the balance it checks.

use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use crate::db::schema::{point_accounts, point_entries};

/// The kinds of ledger entries (the database checks the sign of each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Earn,
    Spend,
    GiftSent,
    GiftReceived,
    Purchase,
    GiftCardCredit,
    Adjustment,
    /// Takes the whole positive balance once its expiry date has passed (`expire.rs`).
    Expiry,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Earn => "earn",
            Kind::Spend => "spend",
            Kind::GiftSent => "gift_sent",
            Kind::GiftReceived => "gift_received",
            Kind::Purchase => "purchase",
            Kind::GiftCardCredit => "gift_card_credit",
            Kind::Adjustment => "adjustment",
            Kind::Expiry => "expiry",
        }
    }

    /// Every kind, in the order reports list them.
    pub const ALL: [Kind; 8] = [
        Kind::Earn,
        Kind::Purchase,
        Kind::GiftReceived,
        Kind::GiftCardCredit,
        Kind::Spend,
        Kind::GiftSent,
        Kind::Expiry,
        Kind::Adjustment,
    ];

    /// The kind stored as `text`.
    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

/// Entries appended, by [`Kind`]: the dashboard's ledger activity.
pub const LEDGER_ENTRIES: &str = "point_ledger_entries_total";

/// One entry to append.
pub struct Entry<'a> {
    pub client_id: i64,
    pub kind: Kind,
    /// The signed change.
    pub points: BigDecimal,
    pub order: Option<Uuid>,
    pub reference: Option<&'a str>,
}

/// Locks the accounts of `client_ids` (creating missing ones) in id order and returns
/// their balances in the same order as `client_ids`.
pub async fn lock_accounts(
    conn: &mut AsyncPgConnection,
    client_ids: &[i64],
) -> QueryResult<Vec<BigDecimal>> {
    let mut sorted = client_ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    diesel::insert_into(point_accounts::table)
        .values(
            sorted
                .iter()
                .map(|id| point_accounts::client_id.eq(*id))
                .collect::<Vec<_>>(),
        )
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    let locked: Vec<(i64, BigDecimal)> = point_accounts::table
        .filter(point_accounts::client_id.eq_any(&sorted))
        .order(point_accounts::client_id)
        .select((point_accounts::client_id, point_accounts::balance))
        .for_update()
        .load(conn)
        .await?;
    Ok(client_ids
        .iter()
        .map(|id| {
            locked
                .iter()
                .find(|(c, _)| c == id)
                .map(|(_, b)| b.clone())
                .unwrap_or_default()
        })
        .collect())
}

/// Appends an entry and moves the cached balance with it; returns the new balance. The
/// caller holds the account's lock (see [`lock_accounts`]).
pub async fn append(conn: &mut AsyncPgConnection, entry: Entry<'_>) -> QueryResult<BigDecimal> {
    diesel::insert_into(point_entries::table)
        .values((
            point_entries::client_id.eq(entry.client_id),
            point_entries::kind.eq(entry.kind.as_str()),
            point_entries::points.eq(&entry.points),
            point_entries::order_correlation_id.eq(entry.order),
            point_entries::reference.eq(entry.reference),
        ))
        .execute(conn)
        .await?;
    // Counted as written, inside the caller's transaction: one that rolls back afterwards (a
    // lock timeout, a crash) was still counted. So this shows activity on the dashboard; the
    // ledger of record is the table, which the audit reads.
    metrics::counter!(LEDGER_ENTRIES, "kind" => entry.kind.as_str()).increment(1);
    diesel::update(point_accounts::table.find(entry.client_id))
        .set((
            point_accounts::balance.eq(point_accounts::balance + &entry.points),
            point_accounts::updated_at.eq(diesel::dsl::now),
        ))
        .returning(point_accounts::balance)
        .get_result(conn)
        .await
}

/// A client's balance, or `None` when it has no account.
pub async fn balance(
    conn: &mut AsyncPgConnection,
    client_id: i64,
) -> QueryResult<Option<BigDecimal>> {
    point_accounts::table
        .find(client_id)
        .select(point_accounts::balance)
        .first(conn)
        .await
        .optional()
}
