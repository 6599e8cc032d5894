//! The closed sets of the point routes' answers and bodies, as the document shows them: a
//! generated client gets an enum, not a free string. The wire carries the same strings (the
//! point service writes the rows' text, which the `points` database's checks hold to these
//! values); these types exist for the schema only.

use utoipa::ToSchema;

/// A point order's status (the spec's "States and transitions").
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum OrderStatus {
    /// A `checkout` order waiting for its payment.
    InitialOrder,
    /// Only on orders copied from the legacy system.
    Paid,
    /// Final: the payment was declined; the client creates a new order.
    PaymentFailed,
    Successful,
}

/// A point order's payment status; null until the payment service reports.
#[derive(ToSchema)]
#[schema(rename_all = "UPPERCASE")]
pub enum PaymentStatus {
    Captured,
    Failed,
    /// Only on orders copied from the legacy system.
    Authorized,
}

/// How a point order is paid.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum PaymentType {
    /// With the payer's points, settled in the create call.
    Point,
    /// By card, through the pay routes.
    Checkout,
}

/// `gift` when an occasion record was found, otherwise `transfer` (free text never decides).
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum OrderType {
    Gift,
    Transfer,
}

/// A history line's kind: the ledger's kind as stored, none renamed or hidden for the app.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub enum LedgerKind {
    Earn,
    Spend,
    GiftSent,
    GiftReceived,
    Purchase,
    GiftCardCredit,
    Adjustment,
    /// Takes the whole positive balance once its expiry date has passed.
    Expiry,
    /// A credit (positive) or debit (negative) support made for the client.
    SupportAdjustment,
}
