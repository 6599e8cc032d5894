//! The fixture's `point_transactions`: ledger rows, appended once each through the ledger.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::AsyncPgConnection;
use domain::Points;
use futures_util::FutureExt;
use serde_json::Value;
use server::SeedReport;
use server::seed::{rows, write};

use super::sections::{Kind, Transaction};
use crate::ledger;

/// Ledger rows are appended once each: the reference names the row by its content (and
/// its rank among identical rows), so a second run finds them all present. Like every
/// writer, the seed appends through the ledger under the accounts' locks (all taken first,
/// in id order, as a transfer takes its two), so entry ids follow the order in which
/// entries are applied, whatever the job or a spend does meanwhile.
pub(super) async fn load_transactions(
    conn: &mut AsyncPgConnection,
    fixture: &Value,
    report: &mut SeedReport,
) -> anyhow::Result<()> {
    let before = report.rejected.len();
    let rows = rows::<Transaction>(fixture, "point_transactions", "client_id", report);
    let rows: Vec<_> = rows
        .iter()
        .filter(|(at, row)| match row.check() {
            Ok(()) => true,
            Err((field, why)) => {
                report.reject(at, Some(field), why);
                false
            }
        })
        .collect();
    let client_ids: Vec<i64> = rows.iter().map(|(_, row)| row.client_id.get()).collect();
    let mut accounts: HashMap<i64, ledger::Locked> = ledger::lock_accounts(conn, &client_ids)
        .await?
        .into_iter()
        .map(|account| (account.client_id(), account))
        .collect();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let (mut added_rows, mut present) = (0, 0);
    for (at, row) in rows {
        let points = match row.kind {
            Kind::Spend => -row.points.clone(),
            Kind::Earn | Kind::Adjustment => row.points.clone(),
        };
        // The exact decimal names the row: the points text would round two rows that differ
        // past 4 decimals into one key. Up to 4 decimals both texts are the same, so rows
        // loaded before keep their reference.
        let key = format!(
            "{}:{:?}:{}:{}",
            row.client_id,
            row.kind,
            row.points.as_decimal().normalized().to_plain_string(),
            row.created_at.to_rfc3339()
        );
        let rank = seen.entry(key.clone()).or_default();
        *rank += 1;
        let reference = format!("fixture:{key}:{rank}");
        let client_id = row.client_id.get();
        let Some(account) = accounts.remove(&client_id) else {
            anyhow::bail!("account {client_id} was not locked");
        };
        let (kind, created_at) = (row.kind, row.created_at);
        let written = write(conn, report, at, move |conn| {
            async move {
                let mut account = account;
                let added =
                    append_entry(conn, &mut account, kind, points, &reference, created_at).await?;
                Ok((account, added))
            }
            .boxed()
        });
        // A row the database refused was rolled back with the account it held: lock it again
        // (this transaction holds the lock already) for the balance as it stands.
        let account = match written.await? {
            Some((account, added)) => {
                if added {
                    added_rows += 1;
                } else {
                    present += 1;
                }
                account
            }
            None => ledger::lock_account(conn, client_id).await?,
        };
        accounts.insert(client_id, account);
    }
    let line = match rejected_count(report, before) {
        0 => format!("point_transactions: {added_rows} added ({present} already present)"),
        rejected => format!(
            "point_transactions: {added_rows} added ({present} already present, {rejected} rejected)"
        ),
    };
    report.line(line);
    Ok(())
}

/// Appends a fixture row unless its reference is in the ledger already (checked under the
/// account's lock, which every writer of this client's entries takes); `true` when added.
async fn append_entry(
    conn: &mut AsyncPgConnection,
    account: &mut ledger::Locked,
    kind: Kind,
    points: Points,
    reference: &str,
    created_at: DateTime<Utc>,
) -> QueryResult<bool> {
    if ledger::has_reference(conn, reference).await? {
        return Ok(false);
    }
    let kind = match kind {
        Kind::Earn => ledger::Kind::Earn,
        Kind::Spend => ledger::Kind::Spend,
        Kind::Adjustment => ledger::Kind::Adjustment,
    };
    ledger::append(
        conn,
        account,
        ledger::Entry {
            kind,
            points: points.into_decimal(),
            order: None,
            reference: Some(reference),
            at: Some(created_at),
        },
    )
    .await?;
    Ok(true)
}

fn rejected_count(report: &SeedReport, before: usize) -> usize {
    report.rejected.len() - before
}
