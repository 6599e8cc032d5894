//! The audit trail: every write, who made it, and the hierarchy before and after, in the
//! write's own transaction.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;
use serde_json::Value;

use catalog_db::schema::operator_audit;

use crate::auth::Operator;
use crate::error::OpError;
use crate::query::{Page, PageMeta};

pub struct Change {
    pub before: Value,
    pub after: Value,
}

pub async fn record(
    conn: &mut AsyncPgConnection,
    operator: &Operator,
    action: &str,
    ids: &[i64],
    change: Change,
) -> Result<(), OpError> {
    diesel::insert_into(operator_audit::table)
        .values((
            operator_audit::operator_id.eq(&operator.id),
            operator_audit::role.eq(operator.role.as_str()),
            operator_audit::action.eq(action),
            operator_audit::service_ids.eq(ids),
            operator_audit::before.eq(&change.before),
            operator_audit::after.eq(&change.after),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

/// One write, in this key order.
#[derive(Debug, Serialize, Queryable, utoipa::ToSchema)]
#[schema(as = AuditEntry)]
pub struct Entry {
    pub id: i64,
    /// The token's `sub`.
    #[serde(rename = "operatorId")]
    pub operator_id: String,
    /// The token's role.
    pub role: String,
    /// `service.create`, `service.update` or `service.children`.
    pub action: String,
    /// The services the write touched.
    #[serde(rename = "serviceIds")]
    pub service_ids: Vec<i64>,
    /// The hierarchy before the write (null on create).
    pub before: Value,
    /// The hierarchy after the write.
    pub after: Value,
    #[serde(rename = "createdAt")]
    pub created_at: DateTime<Utc>,
}

/// Newest first.
pub async fn list(
    conn: &mut AsyncPgConnection,
    page: &Page,
) -> QueryResult<(Vec<Entry>, PageMeta)> {
    let total: i64 = operator_audit::table.count().get_result(conn).await?;
    let rows = operator_audit::table
        .order((operator_audit::created_at.desc(), operator_audit::id.desc()))
        .limit(page.limit)
        .offset(page.offset())
        .select((
            operator_audit::id,
            operator_audit::operator_id,
            operator_audit::role,
            operator_audit::action,
            operator_audit::service_ids,
            operator_audit::before,
            operator_audit::after,
            operator_audit::created_at,
        ))
        .load(conn)
        .await?;
    Ok((rows, page.meta(total)))
}
