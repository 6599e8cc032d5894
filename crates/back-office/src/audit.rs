//! The back office's audit trail: every change, who made it, and the record before and
//! after, written in the change's own transaction by the service that owns the data, to its
//! own database's `back_office_audit` (append-only; the point service's and the order
//! service's have the same columns, so one writer and one reader serve both).

use chrono::{DateTime, Utc};
use diesel::QueryResult;
use diesel::sql_types::{BigInt, Jsonb, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::access::ActingOperator;
use crate::paging::Paging;
use crate::role::Role;

mod kinds;

pub use kinds::BalanceBefore;

/// One change, in this key order. Its document is one schema for each kind of record, by
/// `action` (`kinds`).
#[derive(Debug, Clone, Serialize, Deserialize, diesel::QueryableByName)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    /// The token's `sub`.
    #[diesel(sql_type = Text)]
    pub operator_id: String,
    /// The token's role.
    #[diesel(sql_type = Text)]
    pub role: Role,
    /// What was done, `<record>.<change>`.
    #[diesel(sql_type = Text)]
    pub action: Action,
    /// What was changed: `offer:<id>`, `client:<id>`, `gift-code-batch:<id>`, ...
    #[diesel(sql_type = Text)]
    pub subject: String,
    /// The record before the change (null on create).
    #[diesel(sql_type = Jsonb)]
    pub before: Value,
    /// The record after the change.
    #[diesel(sql_type = Jsonb)]
    pub after: Value,
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
}

db::text_enum! {
    /// What a trail entry records, `<record>.<change>`; a word the code does not know fails
    /// the read of the trail.
    pub enum Action as "BackOfficeAction", "What a trail entry records, `<record>.<change>`." {
        OfferCreate => "offer.create",
        OfferUpdate => "offer.update",
        OfferWithdraw => "offer.withdraw",
        OccasionCreate => "occasion.create",
        OccasionUpdate => "occasion.update",
        OccasionWithdraw => "occasion.withdraw",
        ExpiryPolicyReplace => "expiry_policy.replace",
        AdjustmentCredit => "adjustment.credit",
        AdjustmentDebit => "adjustment.debit",
        GiftCodeBatchIssue => "gift-code-batch.issue",
        GiftCodeBatchRead => "gift-code-batch.read",
        GiftCodeBatchExport => "gift-code-batch.export",
        GiftCodeBatchWithdraw => "gift-code-batch.withdraw",
        EarnRatesReplace => "earn-rates.replace",
    }
}

/// A page of the trail, newest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = BackOfficeAuditPage)]
pub struct Page {
    pub data: Vec<Entry>,
    pub meta: domain::PageMeta,
}

/// A record as the trail keeps it: its JSON as the back office answers it.
pub fn snapshot(record: &impl Serialize) -> Value {
    serde_json::to_value(record).unwrap_or(Value::Null)
}

/// A record the trail holds before and after a change.
pub trait Audited: Serialize {
    /// The trail's subject: `<record>:<id>`.
    fn subject(&self) -> String;
}

/// Records `action` on `after`, from `before` (none for a creation), and answers `after`;
/// the caller's transaction makes it one with the change.
pub async fn changed<T: Audited>(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    action: Action,
    before: Option<&T>,
    after: T,
) -> QueryResult<T> {
    let before = before.map_or(Value::Null, snapshot);
    let subject = after.subject();
    record(conn, operator, action, &subject, before, snapshot(&after)).await?;
    Ok(after)
}

/// Records a change; the caller's transaction makes it one with the change.
pub async fn record(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    action: Action,
    subject: &str,
    before: Value,
    after: Value,
) -> QueryResult<()> {
    diesel::sql_query(
        "INSERT INTO back_office_audit (operator_id, role, action, subject, before, after) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind::<Text, _>(&operator.id)
    .bind::<Text, _>(operator.role.as_str())
    .bind::<Text, _>(action.as_str())
    .bind::<Text, _>(subject)
    .bind::<Jsonb, _>(before)
    .bind::<Jsonb, _>(after)
    .execute(conn)
    .await
    .map(drop)
}

/// A page of the changes, newest first.
pub async fn page(conn: &mut AsyncPgConnection, paging: Paging) -> QueryResult<Page> {
    let columns = "id, operator_id, role, action, subject, before, after, created_at";
    let (data, meta) = paging
        .newest_first(conn, columns, "back_office_audit")
        .await?;
    Ok(Page { data, meta })
}
