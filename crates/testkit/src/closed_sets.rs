//! A document's closed sets against the database's: a generated client fails on an enum
//! value its document does not list, so each enum a service documents must be exactly what
//! its database lets a row hold.

use std::collections::BTreeSet;

use db::testing::TestDatabase;
use diesel_async::RunQueryDsl;
use serde_json::Value;

#[derive(diesel::QueryableByName)]
struct Check {
    #[diesel(sql_type = diesel::sql_types::Text)]
    definition: String,
}

/// The values the CHECK constraint on `table.column` allows (`column IN ('a', 'b')`, which
/// PostgreSQL writes back as `CHECK ((column = ANY (ARRAY['a'::text, 'b'::text])))`).
///
/// # Panics
/// When the table has no such constraint.
pub async fn allowed(database: &TestDatabase, table: &str, column: &str) -> BTreeSet<String> {
    let mut conn = database.connect().await;
    let checks: Vec<Check> = diesel::sql_query(
        "SELECT pg_get_constraintdef(c.oid) AS definition FROM pg_constraint c \
         JOIN pg_class t ON t.oid = c.conrelid WHERE t.relname = $1 AND c.contype = 'c'",
    )
    .bind::<diesel::sql_types::Text, _>(table)
    .load(&mut conn)
    .await
    .unwrap_or_else(|e| panic!("the checks of {table}: {e}"));
    let prefix = format!("CHECK (({column} = ANY");
    let definition = checks
        .into_iter()
        .map(|check| check.definition)
        .find(|definition| definition.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no CHECK on {table}.{column}"));
    definition
        .split('\'')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// The values of the enum schema `name` in `document`.
///
/// # Panics
/// When the document has no such enum.
pub fn documented(document: &Value, name: &str) -> BTreeSet<String> {
    document["components"]["schemas"][name]["enum"]
        .as_array()
        .unwrap_or_else(|| panic!("{name} is not an enum of the document"))
        .iter()
        .map(|value| value.as_str().unwrap_or_default().to_owned())
        .collect()
}
