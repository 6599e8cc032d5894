//! The points ledger (no HTTP in here): an account per client and append-only entries. A
//! balance is the sum of the account's entries; the account's `balance` column caches it
//! and changes only in the transaction that appends an entry. A spend locks the accounts it
//! touches (`FOR UPDATE`, in id order, so two transfers between the same clients cannot
//! deadlock) before it reads the balance it checks. Every writer appends here: the order
//! rules, the webhook, the expiry job, the seed, and `credits` (a credit once per reference,
//! for the internal credit route).

pub mod credits;

use std::collections::BTreeMap;

use bigdecimal::BigDecimal;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Nullable, Numeric, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use crate::db::schema::{point_accounts, point_entries};

/// The kinds of ledger entries (the database checks the sign of each): the type the point
/// routes' document shows. `Expiry` is written by `expiry::job`, `SupportAdjustment` by
/// `back_office::adjustments`.
pub use relayed_routes::closed_sets::LedgerKind as Kind;

/// Entries appended, by [`Kind`]: the dashboard's ledger activity.
pub const LEDGER_ENTRIES: &str = "point_ledger_entries_total";

/// One entry to append.
pub struct Entry<'a> {
    pub kind: Kind,
    /// The signed change.
    pub points: BigDecimal,
    pub order: Option<Uuid>,
    pub reference: Option<&'a str>,
    /// When it happened; `None` is now (the database's clock). Only the seed, importing
    /// entries of the past, gives one.
    pub at: Option<DateTime<Utc>>,
}

/// An account locked (`FOR UPDATE`) by the current transaction, with its balance. Only
/// [`lock_accounts`] makes one, and [`append`] and [`append_all`] take one: every writer appends under the
/// account's lock, so a client's entry ids follow the order in which its entries were
/// applied (the audit's running balances rely on it). It is good for the transaction that
/// locked it only.
#[derive(Debug)]
pub struct Locked {
    client_id: i64,
    balance: BigDecimal,
}

impl Locked {
    pub fn client_id(&self) -> i64 {
        self.client_id
    }

    /// The balance under the lock, moved by each [`append`].
    pub fn balance(&self) -> &BigDecimal {
        &self.balance
    }
}

/// Locks the accounts of `client_ids` (creating missing ones) in id order and returns
/// them in the order of `client_ids`.
pub async fn lock_accounts(
    conn: &mut AsyncPgConnection,
    client_ids: &[i64],
) -> QueryResult<Vec<Locked>> {
    let mut sorted = client_ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.is_empty() {
        return Ok(Vec::new());
    }
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
        .map(|id| Locked {
            client_id: *id,
            balance: locked
                .iter()
                .find(|(c, _)| c == id)
                .map(|(_, b)| b.clone())
                .unwrap_or_default(),
        })
        .collect())
}

/// Locks one account (see [`lock_accounts`]).
pub async fn lock_account(conn: &mut AsyncPgConnection, client_id: i64) -> QueryResult<Locked> {
    let mut locked = lock_accounts(conn, &[client_id]).await?;
    Ok(locked.pop().unwrap_or(Locked {
        client_id,
        balance: BigDecimal::default(),
    }))
}

/// Appends an entry to a locked account and moves the cached balance with it; returns the
/// new balance.
pub async fn append(
    conn: &mut AsyncPgConnection,
    account: &mut Locked,
    entry: Entry<'_>,
) -> QueryResult<BigDecimal> {
    let client_id = account.client_id;
    append_all(
        conn,
        std::slice::from_mut(account),
        vec![(client_id, entry)],
    )
    .await?;
    Ok(account.balance.clone())
}

/// Appends entries to locked accounts, each `(client, entry)` to the account of that client,
/// in one statement whose ids follow the order given (the order in which they were applied),
/// then moves each account's cached balance by the sum of its entries, in one statement too.
/// Every client named must be one of `accounts`: only a lock's holder appends.
pub async fn append_all(
    conn: &mut AsyncPgConnection,
    accounts: &mut [Locked],
    entries: Vec<(i64, Entry<'_>)>,
) -> QueryResult<()> {
    let mut deltas: BTreeMap<i64, BigDecimal> = BTreeMap::new();
    for (client_id, entry) in &entries {
        if !accounts
            .iter()
            .any(|account| account.client_id == *client_id)
        {
            return Err(diesel::result::Error::QueryBuilderError(
                format!("client {client_id}'s account is not locked by this transaction").into(),
            ));
        }
        *deltas.entry(*client_id).or_default() += &entry.points;
    }
    if entries.is_empty() {
        return Ok(());
    }
    let rows: Vec<_> = entries
        .iter()
        .map(|(client_id, entry)| {
            (
                point_entries::client_id.eq(*client_id),
                point_entries::kind.eq(entry.kind.as_str()),
                point_entries::points.eq(&entry.points),
                point_entries::order_correlation_id.eq(entry.order),
                point_entries::reference.eq(entry.reference),
                // `None` is the column's default: the database's clock, the one "today" is
                // read from.
                point_entries::created_at.eq(coalesce(entry.at, diesel::dsl::now)),
            )
        })
        .collect();
    diesel::insert_into(point_entries::table)
        .values(rows)
        .execute(conn)
        .await?;
    // Counted as written, inside the caller's transaction: one that rolls back afterwards (a
    // lock timeout, a crash) was still counted. So this shows activity on the dashboard; the
    // ledger of record is the table, which the audit reads.
    for (_, entry) in &entries {
        metrics::counter!(LEDGER_ENTRIES, "kind" => entry.kind.as_str()).increment(1);
    }
    let (clients, changes): (Vec<i64>, Vec<BigDecimal>) = deltas.into_iter().unzip();
    let moved: Vec<Moved> = diesel::sql_query(
        "UPDATE point_accounts AS a SET balance = a.balance + d.change, updated_at = now() \
         FROM unnest($1::bigint[], $2::numeric[]) AS d(client_id, change) \
         WHERE a.client_id = d.client_id RETURNING a.client_id, a.balance",
    )
    .bind::<Array<BigInt>, _>(clients)
    .bind::<Array<Numeric>, _>(changes)
    .load(conn)
    .await?;
    for row in moved {
        if let Some(account) = accounts.iter_mut().find(|a| a.client_id == row.client_id) {
            account.balance = row.balance;
        }
    }
    Ok(())
}

diesel::define_sql_function! {
    /// The first of its arguments that is not null.
    fn coalesce(given: Nullable<Timestamptz>, otherwise: Timestamptz) -> Timestamptz;
}

/// An account's balance after [`append_all`] moved it.
#[derive(QueryableByName)]
struct Moved {
    #[diesel(sql_type = BigInt)]
    client_id: i64,
    #[diesel(sql_type = Numeric)]
    balance: BigDecimal,
}

/// Whether the ledger holds an entry with this reference (references are unique). Asked
/// under the lock of the client's account ([`Locked`]), which every writer of its entries
/// takes, a `false` stays true until the caller appends.
pub async fn has_reference(conn: &mut AsyncPgConnection, reference: &str) -> QueryResult<bool> {
    diesel::select(diesel::dsl::exists(
        point_entries::table.filter(point_entries::reference.eq(reference)),
    ))
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
