//! The earn-rate table (the `point_rates` option): read with its version, replaced whole on
//! the version it was read at. The option's version is the database's (a trigger takes the
//! next number of a sequence on every change of its value, `seed`'s included), so a stale
//! edit is refused whoever made the change in between.

use back_office::access::ActingOperator;
use back_office::audit;
use back_office::audit::Action;
use back_office::earn_rates::{EarnRateTable, RatesChange, RatesRefusal};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Jsonb, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::Value;

use catalog_db::schema::system_configs;

use crate::error::OrderError;
use crate::point_rates;
use crate::seed::POINT_RATES_KEY;

type Stored = (Value, i64, DateTime<Utc>);

/// The option as stored, with its version and time; `None` while unset.
async fn stored(conn: &mut AsyncPgConnection, lock: bool) -> QueryResult<Option<Stored>> {
    let query = system_configs::table.find(POINT_RATES_KEY).select((
        system_configs::value,
        system_configs::version,
        system_configs::updated_at,
    ));
    if lock {
        query.for_update().first(conn).await.optional()
    } else {
        query.first(conn).await.optional()
    }
}

/// The table as the app reads it, its values as decimal text (the same 500 when the stored
/// option is no table, or holds a value that is no number).
fn table(stored: Option<Stored>) -> Result<EarnRateTable, OrderError> {
    let table = match stored {
        None => EarnRateTable::of(&[], 0, None),
        Some((value, version, updated_at)) => {
            EarnRateTable::of(&point_rates::rows(value)?, version, Some(updated_at))
        }
    };
    table.map_err(|unreadable| OrderError::Internal(unreadable.to_string()))
}

/// The table now.
pub async fn read(conn: &mut AsyncPgConnection) -> Result<EarnRateTable, OrderError> {
    table(stored(conn, false).await?)
}

/// Replaces the table if it is still at the version the change was made from, and records
/// it, in one transaction (a table equal to the one stored changes nothing: it keeps its
/// version and is not recorded). The option's row is locked; while it is unset, its key decides
/// between two first tables (the second is refused as stale).
pub async fn replace(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    change: RatesChange,
) -> Result<EarnRateTable, OrderError> {
    conn.transaction::<_, OrderError, _>(async |conn| {
        let now = stored(conn, true).await?;
        let current = now.as_ref().map_or(0, |(_, version, _)| *version);
        if change.version != current {
            return Err(RatesRefusal::Stale(change.version, current).into());
        }
        // The table before, as the trail keeps it: a stored option that is no table is kept
        // as it was.
        let before = match &now {
            None => Value::Null,
            Some((value, ..)) => match table(now.clone()) {
                Ok(before) => audit::snapshot(&before),
                Err(_) => value.clone(),
            },
        };
        let value =
            serde_json::to_value(&change.rates).map_err(|e| OrderError::Internal(e.to_string()))?;
        // An insert only while unset (a row another first table inserted meanwhile makes
        // this one stale); an update only of the row locked above.
        let written = diesel::sql_query(
            "INSERT INTO system_configs (key, value) VALUES ($1, $2) \
             ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value \
             WHERE system_configs.version = $3",
        )
        .bind::<Text, _>(POINT_RATES_KEY)
        .bind::<Jsonb, _>(&value)
        .bind::<BigInt, _>(current)
        .execute(conn)
        .await?;
        if written == 0 {
            let current = stored(conn, false)
                .await?
                .map_or(0, |(_, version, _)| version);
            return Err(RatesRefusal::Stale(change.version, current).into());
        }
        let after = table(stored(conn, false).await?)?;
        if after.version == current {
            // The same table again: nothing changed, nothing to record.
            return Ok(after);
        }
        audit::record(
            conn,
            operator,
            Action::EarnRatesReplace,
            "earn-rates",
            before,
            audit::snapshot(&after),
        )
        .await?;
        tracing::info!(
            earn_rates.version = after.version,
            earn_rates.rows = after.rates.len(),
            operator.id = %operator.id,
            "earn-rate table replaced"
        );
        Ok(after)
    })
    .await
}
