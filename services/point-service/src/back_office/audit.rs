//! The back office's audit trail: who changed what, the record before and after, written in
//! the change's transaction (`back_office_audit`, append-only).

use back_office::audit::Entry;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;

use crate::db::schema::back_office_audit;
use crate::internal_access::ActingOperator;

/// How many changes the trail answers, newest first.
pub const PAGE: i64 = 100;

/// A record as the trail keeps it: its JSON as the back office answers it.
pub fn snapshot(record: &impl serde::Serialize) -> Value {
    serde_json::to_value(record).unwrap_or(Value::Null)
}

/// Records a change; the caller's transaction makes it one with the change.
pub async fn record(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    action: &str,
    subject: &str,
    before: Value,
    after: Value,
) -> QueryResult<()> {
    diesel::insert_into(back_office_audit::table)
        .values((
            back_office_audit::operator_id.eq(&operator.id),
            back_office_audit::role.eq(&operator.role),
            back_office_audit::action.eq(action),
            back_office_audit::subject.eq(subject),
            back_office_audit::before.eq(before),
            back_office_audit::after.eq(after),
        ))
        .execute(conn)
        .await
        .map(drop)
}

type Row = (
    i64,
    String,
    String,
    String,
    String,
    Value,
    Value,
    DateTime<Utc>,
);

/// The newest [`PAGE`] changes, newest first.
pub async fn newest(conn: &mut AsyncPgConnection) -> QueryResult<Vec<Entry>> {
    let rows: Vec<Row> = back_office_audit::table
        .order((
            back_office_audit::created_at.desc(),
            back_office_audit::id.desc(),
        ))
        .limit(PAGE)
        .select((
            back_office_audit::id,
            back_office_audit::operator_id,
            back_office_audit::role,
            back_office_audit::action,
            back_office_audit::subject,
            back_office_audit::before,
            back_office_audit::after,
            back_office_audit::created_at,
        ))
        .load(conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(
            |(id, operator_id, role, action, subject, before, after, created_at)| Entry {
                id,
                operator_id,
                role,
                action,
                subject,
                before,
                after,
                created_at,
            },
        )
        .collect())
}
