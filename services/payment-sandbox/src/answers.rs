//! The JSON the API answers, each type with its keys in the documented order; the
//! OpenAPI document's schemas are derived from these very types.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::payments::{Payment, Status};

/// `POST /v1/payments`: what the client does next. `pending` with the 3-D Secure page to
/// open, or `declined` with no page.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct PaymentStarted {
    #[schema(example = "pay_0f1e2d3c4b5a69788796a5b4c3d2e1f0")]
    pub id: String,
    pub status: Status,
    /// Always present: `null` for a declined payment.
    #[schema(
        required = true,
        example = "http://127.0.0.1:8085/3ds/pay_0f1e2d3c4b5a69788796a5b4c3d2e1f0"
    )]
    pub redirect_url: Option<String>,
}

/// `POST /v1/payment-sessions`: the session, started and pending.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SessionStarted {
    #[schema(example = "ses_0f1e2d3c4b5a69788796a5b4c3d2e1f0")]
    pub id: String,
    #[schema(example = "tok_9a8b7c6d5e4f30211203f4e5d6c7b8a9")]
    pub session_token: String,
    /// Always `pending`.
    pub status: Status,
    /// As asked.
    pub remember_me: bool,
    pub redirect_url: String,
}

/// A payment or session read back: the gateway's truth, whether or not its webhook was
/// delivered.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct PaymentView {
    /// `pay_…` for a card payment, `ses_…` for a session.
    #[schema(example = "pay_0f1e2d3c4b5a69788796a5b4c3d2e1f0")]
    pub id: String,
    /// The order's correlation id the payment was made for.
    #[schema(example = "6f1c2a4e-0000-4000-8000-000000000001")]
    pub reference: String,
    pub status: Status,
    #[schema(example = 1500)]
    pub amount_minor: i64,
    #[schema(example = "SAR")]
    pub currency: String,
    /// When it was made, or when its status last moved (RFC 3339, UTC).
    pub updated_at: DateTime<Utc>,
}

impl From<&Payment> for PaymentView {
    fn from(payment: &Payment) -> Self {
        Self {
            id: payment.id.clone(),
            reference: payment.reference.clone(),
            status: payment.status,
            amount_minor: payment.amount_minor,
            currency: payment.currency.clone(),
            updated_at: payment.updated_at,
        }
    }
}

/// `GET /v1/payments?reference=…`: every payment and session made for the reference,
/// oldest first.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct PaymentList {
    pub data: Vec<PaymentView>,
}

/// One capture of a day's settlement.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SettlementEntry {
    #[schema(example = "pay_0f1e2d3c4b5a69788796a5b4c3d2e1f0")]
    pub id: String,
    #[schema(example = "6f1c2a4e-0000-4000-8000-000000000001")]
    pub reference: String,
    #[schema(example = 1500)]
    pub amount_minor: i64,
    #[schema(example = "SAR")]
    pub currency: String,
    /// RFC 3339, UTC: on the settlement's day.
    pub captured_at: DateTime<Utc>,
}

impl SettlementEntry {
    /// The entry of a captured payment; `None` for one that is not.
    pub fn of(payment: &Payment) -> Option<Self> {
        Some(Self {
            id: payment.id.clone(),
            reference: payment.reference.clone(),
            amount_minor: payment.amount_minor,
            currency: payment.currency.clone(),
            captured_at: payment.captured_at?,
        })
    }
}

/// `GET /v1/settlements/{date}`: a page of the day's captures, by capture time then id.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SettlementPage {
    pub data: Vec<SettlementEntry>,
    /// The `cursor` of the next page; `null` on the last page.
    #[schema(required = true)]
    pub next: Option<String>,
}

/// `/healthz` and `/readyz`: the sandbox depends on nothing, so alive is ready.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Health {
    /// `ok`.
    pub status: &'static str,
}
