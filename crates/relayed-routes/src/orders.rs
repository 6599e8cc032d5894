//! Point orders: `POST /point-orders`, `POST /point-orders/description`,
//! `GET /point-orders/{correlation_id}`; their bodies, answers and refusals.

use bigdecimal::BigDecimal;
use envelope::Refuses;
use envelope::openapi::Limited;
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::closed_sets::{OrderStatus, OrderType, PaymentStatus, PaymentType};
use crate::offers::{OccasionRefusal, OfferRefusal};

/// The nine keys of a point order, the same from create and get.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = Order)]
pub struct OrderView {
    pub correlation_id: Uuid,
    /// From 100000; null only on orders copied from the legacy system.
    #[schema(required)]
    pub order_no: Option<i64>,
    #[schema(value_type = OrderStatus)]
    pub status: String,
    /// Null until the payment service reports.
    #[schema(value_type = Option<PaymentStatus>, required)]
    pub payment_status: Option<String>,
    /// The offer's point_amount, exactly (see the offer).
    #[serde(serialize_with = "crate::wire::as_number")]
    #[schema(value_type = f64, format = "decimal")]
    pub point_amount: BigDecimal,
    /// The offer's purchased_point_amount, exactly; a `point` order charged the payer
    /// exactly this.
    #[serde(serialize_with = "crate::wire::as_optional_number")]
    #[schema(value_type = Option<f64>, format = "decimal", required)]
    pub purchased_point_amount: Option<BigDecimal>,
    /// SAR, two decimals; the card payment is exactly 100 times this in halalas.
    #[serde(serialize_with = "crate::wire::as_money")]
    #[schema(value_type = String)]
    pub money_amount: BigDecimal,
    #[schema(value_type = PaymentType)]
    pub payment_type: String,
    #[schema(value_type = OrderType)]
    pub order_type: String,
}

/// The body of `POST /point-orders` as the document shows it. The point service reads the
/// raw JSON with the spec's coercions (a numeric string is an id, `0` means no occasion) and
/// reports every bad field, so this type is never deserialized.
#[derive(ToSchema)]
pub struct OrderBody {
    /// 24 hex characters.
    #[schema(pattern = "^[0-9a-fA-F]{24}$", example = "64b7f0c2a1b2c3d4e5f60719")]
    pub point_offer_id: String,
    /// A positive integer (a numeric string is read as one).
    #[schema(minimum = 1, example = 1002)]
    pub to_client_id: i64,
    #[schema(value_type = PaymentType, example = "checkout")]
    pub payment_type: String,
    /// 24 hex characters; missing, null, 0, "0" and "" mean none.
    #[schema(example = "64b7f0c2a1b2c3d4e5f60801")]
    pub point_occasion_id: Option<String>,
    /// Free text, 1 to 255 characters after trimming.
    #[schema(max_length = 255, example = "Happy birthday")]
    pub occasion: Option<String>,
}

/// The body of `POST /point-orders/description` as the document shows it (the point service
/// reads the raw JSON: a bad offer id is its own 400, an unknown key is ignored).
#[derive(ToSchema)]
pub struct DescriptionBody {
    #[schema(pattern = "^[0-9a-fA-F]{24}$", example = "64b7f0c2a1b2c3d4e5f60718")]
    pub point_offer_id: String,
    #[schema(example = "64b7f0c2a1b2c3d4e5f60801")]
    pub point_occasion_id: Option<String>,
    /// Free text; wins over the occasion id.
    pub occasion: Option<String>,
    /// `ar` for the Arabic occasion label.
    #[schema(example = "ar")]
    pub language: Option<String>,
}

/// The gift message.
#[derive(Debug, Serialize, ToSchema)]
pub struct Description {
    /// e.g. `Sara Ali sent you 100 points  for Birthday` (the double space is on purpose).
    pub description: String,
}

envelope::refusals! {
    /// Why creating a point order is refused, besides the offer and the occasion it names
    /// and the payer's profile.
    pub enum OrderRefusal in B {
        /// Answered with `details`: each bad field, in schema order.
        InvalidBody => 400, "Invalid point-order body";
        BadIdempotencyKey => 400, "Idempotency-Key must be 1 to 255 visible characters";
        /// `point` to oneself.
        SelfPayment => 400, "a point order cannot be paid with points to yourself";
        UnknownRecipient(id: i64) => 400, "to_client_id {id} does not exist";
        /// `point` for an offer without a points price.
        NotPayableWithPoints(id: String) => 400,
            "point offer {id} cannot be paid with points: it has no purchased_point_amount";
        /// `point` while POINT_ORDER_POINT_ENABLED is off.
        PointPaymentDisabled => 403, "paying a point order with points is disabled";
        /// The same caller and key within 24 hours, with another body.
        IdempotencyKeyReused => 409, "Idempotency-Key was already used with a different request";
        /// The payer's balance is below the offer's points price.
        InsufficientPoints(id: i64) => 422 "INSUFFICIENT_POINTS", "insufficient points for client {id}";
        /// A `checkout` order when the payer already has UNPAID_ORDERS_PER_CLIENT_PER_DAY
        /// unpaid ones from the last 24 hours (answered with `Retry-After`).
        TooManyUnpaid(n: u64) => 429,
            "too many unpaid point orders: {n} in 24 hours; pay or drop the older ones first";
    }
}

envelope::refusals! {
    /// The payer (the caller) has no profile at the auth service.
    pub enum PayerRefusal in B {
        UnknownPayer(id: i64) => 400, "client {id} does not exist";
    }
}

envelope::refusals! {
    /// A gift message asked for an offer id that is not 24 hex characters.
    pub enum DescriptionRefusal in B {
        BadPointOfferId => 400, "point_offer_id must be a 24-character hex ObjectId";
    }
}

envelope::refusals! {
    /// An order id that names no order the caller may see (missing, not a UUID, or the
    /// caller is not its payer, nor its recipient where the route lets the recipient see it).
    pub enum OrderLookupRefusal in B {
        OrderNotFound => 404, "point order not found";
    }
}

/// What a gift message refuses.
type DescriptionRefusals = Refuses<(
    DescriptionRefusal,
    OfferRefusal,
    OccasionRefusal,
    PayerRefusal,
)>;

/// What creating an order refuses, the 429 with its `Retry-After`.
pub type CreateRefusals =
    Limited<Refuses<(OfferRefusal, OccasionRefusal, PayerRefusal, OrderRefusal)>>;

/// The order's id in the path.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct OrderPath {
    /// The order's correlation_id (a UUID); anything else is 404.
    #[param(format = Uuid, example = "6f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11")]
    pub correlation_id: String,
}

/// The create's idempotency header.
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
pub struct IdempotencyKey {
    /// The same caller and key within 24 hours answers the first order; another body gets
    /// 409.
    #[param(rename = "Idempotency-Key")]
    pub key: Option<String>,
}

/// Create a point order (`point` settles at once, `checkout` waits for payment)
///
/// Checks, in the spec's order. `point`: the flag, self-payment, the offer, the recipient,
/// the occasion, the offer's points price, the payer's profile, then the charge. `checkout`:
/// the offer, the recipient, the occasion, then the payer's unpaid orders of the last 24
/// hours; the order is saved unpaid.
#[utoipa::path(post, path = "/point-orders", params(IdempotencyKey),
    request_body = OrderBody,
    responses(CreateRefusals, (status = 200, body = OrderView)))]
pub fn create_point_order() {}

/// Compose the gift message text (writes nothing)
///
/// `{point_offer_id, point_occasion_id?, occasion?}` → `{description}`. Looks up the offer,
/// then the occasion only when there is no free text, then the caller.
#[utoipa::path(post, path = "/point-orders/description", request_body = DescriptionBody,
    responses(DescriptionRefusals, (status = 200, body = Description)))]
pub fn describe_point_order() {}

/// One point order (payer or recipient)
///
/// The order when the caller is its payer or its recipient; anyone else gets the same 404.
#[utoipa::path(get, path = "/point-orders/{correlation_id}",
    responses(OrderLookupRefusal, (status = 200, body = OrderView)))]
pub fn get_point_order() {}
