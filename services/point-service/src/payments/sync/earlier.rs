//! The final readings of an order's payments from earlier passes (`payment_sync_readings`):
//! a payment read as captured or declined is kept while its order is synced, so that a later
//! pass reading it otherwise is a [`Dispute`](super::read::Dispute) that decides nothing.
//! The first final reading stays: a gateway that flips keeps disagreeing with it.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use crate::db::schema::payment_sync_readings;
use crate::payments::client::{ReadPayment, ReadStatus};

/// The order's payments as earlier passes read them in a final state.
pub async fn readings(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
) -> QueryResult<Vec<ReadPayment>> {
    let rows: Vec<(String, String, i64, String)> = payment_sync_readings::table
        .filter(payment_sync_readings::correlation_id.eq(correlation_id))
        .select((
            payment_sync_readings::payment_id,
            payment_sync_readings::status,
            payment_sync_readings::amount_minor,
            payment_sync_readings::currency,
        ))
        .load(conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(id, status, amount_minor, currency)| ReadPayment {
            id,
            reference: correlation_id.to_string(),
            status: match status.as_str() {
                "captured" => ReadStatus::Captured,
                "declined" => ReadStatus::Declined,
                _ => ReadStatus::Other,
            },
            amount_minor,
            currency,
        })
        .collect())
}

/// Keeps the final readings among `payments` that no earlier pass kept, while the order's
/// sync row exists (a webhook that made it final meanwhile took the row and its readings).
pub async fn remember<'a>(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
    payments: impl Iterator<Item = &'a ReadPayment>,
) -> QueryResult<()> {
    for payment in payments {
        let status = match payment.status {
            ReadStatus::Captured => "captured",
            ReadStatus::Declined => "declined",
            ReadStatus::Pending | ReadStatus::Other => continue,
        };
        diesel::sql_query(
            "INSERT INTO payment_sync_readings (correlation_id, payment_id, status, amount_minor, currency) \
             SELECT correlation_id, $2, $3, $4, $5 FROM payment_syncs WHERE correlation_id = $1 \
             ON CONFLICT DO NOTHING",
        )
        .bind::<diesel::sql_types::Uuid, _>(correlation_id)
        .bind::<diesel::sql_types::Text, _>(&payment.id)
        .bind::<diesel::sql_types::Text, _>(status)
        .bind::<diesel::sql_types::BigInt, _>(payment.amount_minor)
        .bind::<diesel::sql_types::Text, _>(&payment.currency)
        .execute(conn)
        .await?;
    }
    Ok(())
}
