//! The closed sets of the point routes' answers and bodies, as the document shows them: a
//! generated client gets an enum, not a free string. The wire carries the same strings (the
//! point service writes the rows' text, which the `points` database's checks hold to these
//! values); these types exist for the schema only, except [`LedgerKind`], which the ledger
//! itself uses.

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
// Unlike the other sets here, this one is also the ledger's own type (the point service's
// `ledger::Kind`): the text it stores is `as_str`'s, and the `points` database checks the
// sign of each. (Not a doc comment: the schema's description is the line above.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, ToSchema)]
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

impl LedgerKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [LedgerKind; 9] = [
        LedgerKind::Earn,
        LedgerKind::Purchase,
        LedgerKind::GiftReceived,
        LedgerKind::GiftCardCredit,
        LedgerKind::Spend,
        LedgerKind::GiftSent,
        LedgerKind::Expiry,
        LedgerKind::Adjustment,
        LedgerKind::SupportAdjustment,
    ];

    /// The kind as stored and answered.
    pub fn as_str(self) -> &'static str {
        match self {
            LedgerKind::Earn => "earn",
            LedgerKind::Spend => "spend",
            LedgerKind::GiftSent => "gift_sent",
            LedgerKind::GiftReceived => "gift_received",
            LedgerKind::Purchase => "purchase",
            LedgerKind::GiftCardCredit => "gift_card_credit",
            LedgerKind::Adjustment => "adjustment",
            LedgerKind::Expiry => "expiry",
            LedgerKind::SupportAdjustment => "support_adjustment",
        }
    }

    /// The kind stored as `text`.
    pub fn parse(text: &str) -> Option<LedgerKind> {
        LedgerKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == text)
    }
}
