//! Support's adjustments (no HTTP in here): a credit or a debit of one client's points, one
//! `support_adjustment` entry and one `support_adjustments` row, with its audit row, in one
//! transaction that holds the client's account (`FOR UPDATE`), the lock every spend, order,
//! credit and expiry of that client takes first: a debit checks the balance it takes from
//! under that lock, so it can never race a point order into a negative balance.
//!
//! The operator's reference makes it idempotent: its row is inserted first, so two tries
//! with one reference (whatever their clients, whose account locks do not meet) meet on its
//! key; the second waits for the first and then answers it, or refuses another client,
//! amount or reason. The entry's own reference, `support:<reference>`, is UNIQUE as well.

use ::back_office::audit::Action;
use back_office::adjustments::{AdjustmentFields, AdjustmentRecord, AdjustmentRefusal};
use bigdecimal::{BigDecimal, Zero};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::Points;

use crate::db::schema::support_adjustments;
use crate::error::PointError;
use crate::ledger::{self, Entry, Kind};
use ::back_office::audit;
use back_office::access::ActingOperator;

/// An adjustment's row, as the back office reads and writes it.
#[derive(Queryable, Selectable)]
#[diesel(table_name = support_adjustments, check_for_backend(diesel::pg::Pg))]
struct Row {
    reference: String,
    client_id: i64,
    points: BigDecimal,
    reason: String,
    operator_id: String,
    operator_role: String,
    balance_after: BigDecimal,
    created_at: DateTime<Utc>,
}

fn record(row: Row) -> AdjustmentRecord {
    AdjustmentRecord {
        reference: row.reference,
        client_id: row.client_id,
        points: back_office::decimal_text(&row.points),
        reason: row.reason,
        operator_id: row.operator_id,
        role: row.operator_role,
        balance_after: Points::new(row.balance_after).to_text(),
        created_at: row.created_at,
    }
}

/// What [`adjust`] did: made the adjustment, or found it made by an earlier try.
pub enum Adjusted {
    Made(AdjustmentRecord),
    Earlier(AdjustmentRecord),
}

/// Adjusts `client_id`'s points for `operator`; the caller has checked that the client exists.
pub async fn adjust(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    client_id: i64,
    fields: AdjustmentFields,
) -> Result<Adjusted, PointError> {
    conn.transaction(async |conn| {
        let mut account = ledger::lock_account(conn, client_id).await?;
        let claimed = diesel::insert_into(support_adjustments::table)
            .values((
                support_adjustments::reference.eq(&fields.reference),
                support_adjustments::client_id.eq(client_id),
                support_adjustments::points.eq(&fields.points),
                support_adjustments::reason.eq(&fields.reason),
                support_adjustments::operator_id.eq(&operator.id),
                support_adjustments::operator_role.eq(operator.role.as_str()),
                // Set below, once the entry is written, in this same transaction.
                support_adjustments::balance_after.eq(BigDecimal::zero()),
            ))
            .on_conflict_do_nothing()
            .execute(conn)
            .await?;
        if claimed == 0 {
            let earlier: Row = support_adjustments::table
                .find(&fields.reference)
                .select(Row::as_select())
                .first(conn)
                .await?;
            return if (earlier.client_id, &earlier.points, &earlier.reason)
                == (client_id, &fields.points, &fields.reason)
            {
                Ok(Adjusted::Earlier(record(earlier)))
            } else {
                Err(AdjustmentRefusal::ReferenceUsed(fields.reference.clone()).into())
            };
        }
        let before = account.balance().clone();
        if fields.points < BigDecimal::zero() && &before + &fields.points < BigDecimal::zero() {
            return Err(
                AdjustmentRefusal::Overdraws(client_id, Points::new(before).to_text()).into(),
            );
        }
        let reference = format!("support:{}", fields.reference);
        let balance = ledger::append(
            conn,
            &mut account,
            Entry {
                kind: Kind::SupportAdjustment,
                points: fields.points.clone(),
                order: None,
                reference: Some(&reference),
                at: None,
            },
        )
        .await?;
        let row: Row = diesel::update(support_adjustments::table.find(&fields.reference))
            .set(support_adjustments::balance_after.eq(&balance))
            .returning(Row::as_returning())
            .get_result(conn)
            .await?;
        let made = record(row);
        let action = if fields.points > BigDecimal::zero() {
            Action::AdjustmentCredit
        } else {
            Action::AdjustmentDebit
        };
        audit::record(
            conn,
            operator,
            action,
            &format!("client:{client_id}"),
            audit::snapshot(&audit::BalanceBefore {
                balance: Points::new(before).to_text(),
            }),
            audit::snapshot(&made),
        )
        .await?;
        Ok(Adjusted::Made(made))
    })
    .await
}
