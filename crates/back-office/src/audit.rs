//! The back office's audit trail: every change, who made it, and the record before and
//! after, written in the change's own transaction by the service that owns the data.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// One change, in this key order.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = BackOfficeAuditEntry)]
pub struct Entry {
    pub id: i64,
    /// The token's `sub`.
    pub operator_id: String,
    /// The token's role.
    pub role: String,
    /// `offer.create`, `offer.update`, `offer.withdraw`, `adjustment.credit` or
    /// `adjustment.debit`.
    pub action: String,
    /// What was changed: `offer:<id>` or `client:<id>`.
    pub subject: String,
    /// The record before the change (null on create).
    pub before: Value,
    /// The record after the change.
    pub after: Value,
    pub created_at: DateTime<Utc>,
}

/// A page of the trail, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[schema(as = BackOfficeAuditPage)]
pub struct Page {
    pub data: Vec<Entry>,
}
