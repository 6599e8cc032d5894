//! Paying a `checkout` order: `POST /point-orders/{correlation_id}/pay/card` and
//! `.../pay/session`; their bodies, answers and refusals.

use envelope::Refuses;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::PayAnswers;
use crate::orders::{OrderLookupRefusal, PayerRefusal};

/// The body of the card route as the document shows it (the point service reads the raw
/// JSON and answers each missing or bad field in `details`).
#[derive(ToSchema)]
pub struct CardBody {
    /// The saved card's id.
    #[schema(example = "card_visa_4242")]
    pub id: String,
    /// 3 or 4 digits; forwarded to the payment service, never stored or logged.
    #[schema(pattern = "^[0-9]{3,4}$", example = "123")]
    pub cvv: String,
}

/// The body of the session route as the document shows it (anything but `true` is false).
#[derive(ToSchema)]
pub struct SessionBody {
    #[schema(rename = "rememberMe")]
    pub remember_me: Option<bool>,
}

/// The payment service's answer to a card payment, which the card route passes on as it
/// came (its contract as the document shows it; never read): `pending` with the 3-D Secure
/// page to open, or `declined` with none.
#[derive(ToSchema)]
pub struct PaymentStarted {
    pub id: String,
    #[schema(value_type = PaymentServiceStatus)]
    pub status: String,
    /// The 3-D Secure page to open; null when the payment was declined at once.
    #[schema(required)]
    pub redirect_url: Option<String>,
}

/// A payment's status at the payment service (docs/design.md, "Payment service").
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum PaymentServiceStatus {
    Pending,
    Captured,
    Declined,
}

/// The payment service's answer to a payment session, which the session route passes on as
/// it came: at least these keys (docs/design.md, "Payment service"); others may follow.
#[derive(ToSchema)]
pub struct PaymentSession {
    pub id: String,
    /// What the app's payment sheet opens the session with.
    pub session_token: String,
}

/// The payment service's own refusal (a 4xx), which both pay routes pass on with its status
/// and body as they came, whatever the status (a 404 may be it, or the point service's own).
/// Our payment service (and its sandbox) answer `{error: {code, message}}` (e.g. 402
/// `card_declined`); the body is passed on unread, so a client keeps whatever else it holds.
#[derive(ToSchema)]
pub struct PaymentServiceError {
    #[schema(nullable = false)]
    pub error: Option<PaymentServiceRefusal>,
}

/// What the payment service refused, in its words.
#[derive(ToSchema)]
pub struct PaymentServiceRefusal {
    /// e.g. `card_declined`.
    pub code: String,
    pub message: String,
}

envelope::refusals! {
    /// Why an order cannot be paid now (besides not being the caller's, and the payer's
    /// profile).
    pub enum PayRefusal in B {
        /// POINT_ORDER_CARD_ENABLED is off (checked before any read).
        CardPaymentDisabled => 403, "card payment for point orders is disabled";
        NotCheckout(id: Uuid) => 400, "point order {id} is not a checkout order";
        /// Also when it was paid while this call was being checked.
        AlreadyPaid(id: Uuid) => 409, "point order {id} is already paid";
        /// Also when it failed while this call was being checked.
        PaymentFailed(id: Uuid) => 409, "point order {id} payment failed; create a new order";
        NoAmountToPay(id: Uuid) => 400, "point order {id} has no amount to pay";
        /// Made longer ago than UNPAID_ORDER_LAPSE_HOURS (default 24): the app makes a new one.
        Lapsed(id: Uuid, hours: u64) =>
            409, "point order {id} was not paid within {hours} hours; create a new order";
        /// Its offer was withdrawn, taken off sale or repriced since it was made: it is not
        /// paid at a price the offer no longer has.
        OfferChanged(id: Uuid) =>
            409, "point order {id} was made at a price its offer no longer has; create a new order";
        /// The order's payment attempts reached PAYMENT_ATTEMPTS_PER_ORDER (default 20, card
        /// and session calls together): bounded for the order's life, so no `Retry-After`.
        TooManyAttempts(id: Uuid, n: u64) =>
            429, "too many payment attempts for point order {id}: {n}";
    }
}

envelope::refusals! {
    /// A card body without a card id or a 3- or 4-digit cvv.
    pub enum CardRefusal in B {
        /// Answered with `details`: each missing or bad field.
        InvalidPayBody => 400, "Invalid pay body";
    }
}

/// The refusals of both pay routes.
type PayRefusals = Refuses<(PayRefusal, OrderLookupRefusal, PayerRefusal)>;

/// The card route's: [`PayRefusals`] and its body's.
type CardRefusals = Refuses<(CardRefusal, PayRefusal, OrderLookupRefusal, PayerRefusal)>;

/// Pay a checkout order with a saved card (3-D Secure)
///
/// Checks, in the spec's order: the flag, the caller's own order, its payment type, the
/// payment service configured, not `successful`, not `payment_failed`, not lapsed
/// (`UNPAID_ORDER_LAPSE_HOURS` after it was made, default 24) and its offer still sold at
/// the order's price (both 409: the app makes a new order, as after a failed payment), the
/// payer's profile, the amount; then the body. The 200 is the payment service's answer as it came
/// (follow its `redirect_url` through 3-D Secure). The pay routes never move the order; the
/// payment webhook does. Each call is a payment attempt of the order, limited per order.
#[utoipa::path(post, path = "/point-orders/{correlation_id}/pay/card",
    request_body = CardBody,
    responses(PayAnswers, CardRefusals, (status = 200, body = PaymentStarted)))]
pub fn pay_point_order_by_card() {}

/// Start a payment session for a new card or a wallet
///
/// The same checks as the card route, in the same order; the body is never refused. The 200
/// is the payment service's answer as it came.
#[utoipa::path(post, path = "/point-orders/{correlation_id}/pay/session",
    request_body = SessionBody,
    responses(PayAnswers, PayRefusals, (status = 200, body = PaymentSession)))]
pub fn start_point_order_payment_session() {}
