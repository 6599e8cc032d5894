//! The service's one route table and its OpenAPI document. The app reaches these routes
//! only through the order service's relay, which forwards the same paths.

use actix_web::web;
use utoipa::OpenApi;

use crate::handlers::{catalog, internal, orders, pay, points, webhook};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "point-service",
        description = "The points ledger, offers, occasions, point orders, card payments and the payment webhook. \
                       The app reaches the /api/v2/client routes through the order service's relay. Errors use \
                       envelope B: {success: false, error: {code, message, details?}}. Every /api/v2/client route \
                       resolves the caller through the auth service's /api/v1/users with the caller's Authorization."
    ),
    paths(
        points::balance, points::history, points::faq, catalog::offers, catalog::offer, catalog::occasions,
        orders::create, orders::get, orders::description, pay::card, pay::session, webhook::payments, internal::credit,
    ),
    modifiers(&Security),
)]
struct ApiDoc;

struct Security;

impl utoipa::Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
        let mut legacy = Http::new(HttpAuthScheme::Bearer);
        legacy.description =
            Some("A legacy token (dev): what the auth service's /api/v1/users accepts.".into());
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme("legacy", SecurityScheme::Http(legacy));
    }
}

/// Shapes for the document only.
pub mod doc {
    use utoipa::ToSchema;

    /// The balance, in this key order.
    #[derive(ToSchema)]
    pub struct Balance {
        /// The client id as text.
        pub id: String,
        pub user_id: String,
        /// At most 4 decimals, no trailing zeros or dot; `0` with no account; may be negative.
        pub points: String,
        /// `YYYY-MM-DD` in Asia/Riyadh, or null.
        #[schema(rename = "pointsExpirationDate")]
        pub points_expiration_date: Option<String>,
    }

    #[derive(ToSchema)]
    pub struct HistoryEntry {
        pub id: i64,
        /// earn, spend, gift_sent, gift_received, purchase, gift_card_credit, adjustment.
        pub kind: String,
        /// The signed change, as points text.
        pub points: String,
        pub correlation_id: Option<String>,
        pub created_at: String,
    }

    #[derive(ToSchema)]
    pub struct PageMeta {
        #[schema(rename = "totalItems")]
        pub total_items: i64,
        pub page: i64,
        #[schema(rename = "itemsPerPage")]
        pub items_per_page: i64,
        #[schema(rename = "totalPages")]
        pub total_pages: i64,
    }

    #[derive(ToSchema)]
    pub struct HistoryPage {
        pub data: Vec<HistoryEntry>,
        pub meta: PageMeta,
    }

    #[derive(ToSchema)]
    pub struct Faq {
        pub question_en: String,
        pub answer_en: String,
        pub question_ar: String,
        pub answer_ar: String,
    }

    #[derive(ToSchema)]
    pub struct Offer {
        /// 24 hex characters.
        pub id: String,
        /// Points the recipient gets: the exact decimal as a JSON number in plain notation,
        /// integral values as integers (`7.75`, `100`, never `100.0` or an exponent). It may
        /// have more digits than a double holds: read it as a decimal.
        pub point_amount: f64,
        /// Points the payer is charged with `point`, exactly; same form as `point_amount`.
        pub purchased_point_amount: Option<f64>,
        /// SAR, exactly two decimals; a card payment asks for exactly 100 times this in
        /// halalas (`amount_minor`). Prices in fractions of a halala are refused when loaded,
        /// never rounded.
        pub amount: String,
    }

    #[derive(ToSchema)]
    pub struct Occasion {
        pub id: String,
        pub occasion: String,
        pub occasion_en: String,
        /// 0 or 1.
        pub is_custom: i32,
    }

    #[derive(ToSchema)]
    pub struct OrderBody {
        /// 24 hex characters.
        #[schema(pattern = "^[0-9a-fA-F]{24}$", example = "64b7f0c2a1b2c3d4e5f60719")]
        pub point_offer_id: String,
        /// A positive integer (a numeric string is read as one).
        #[schema(minimum = 1, example = 1002)]
        pub to_client_id: i64,
        /// `point` or `checkout`.
        #[schema(pattern = "^(point|checkout)$", example = "checkout")]
        pub payment_type: String,
        /// 24 hex characters; missing, null, 0, "0" and "" mean none.
        #[schema(example = "64b7f0c2a1b2c3d4e5f60801")]
        pub point_occasion_id: Option<String>,
        /// Free text, 1 to 255 characters after trimming.
        #[schema(max_length = 255, example = "Happy birthday")]
        pub occasion: Option<String>,
    }

    /// The nine keys of a point order.
    #[derive(ToSchema)]
    pub struct Order {
        pub correlation_id: String,
        pub order_no: Option<i64>,
        /// initial_order, paid, payment_failed, successful.
        pub status: String,
        /// CAPTURED, FAILED, AUTHORIZED or null.
        pub payment_status: Option<String>,
        /// The offer's point_amount, exactly (see the offer).
        pub point_amount: f64,
        /// The offer's purchased_point_amount, exactly; a `point` order charged the payer
        /// exactly this.
        pub purchased_point_amount: Option<f64>,
        /// SAR, two decimals; the card payment is exactly 100 times this in halalas.
        pub money_amount: String,
        pub payment_type: String,
        /// gift or transfer.
        pub order_type: String,
    }

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

    #[derive(ToSchema)]
    pub struct Description {
        /// e.g. `Sara Ali sent you 100 points  for Birthday` (the double space is on purpose).
        pub description: String,
    }

    #[derive(ToSchema)]
    pub struct CardBody {
        /// The saved card's id.
        #[schema(example = "card_visa_4242")]
        pub id: String,
        /// 3 or 4 digits; forwarded to the payment service, never stored or logged.
        #[schema(pattern = "^[0-9]{3,4}$", example = "123")]
        pub cvv: String,
    }

    #[derive(ToSchema)]
    pub struct SessionBody {
        #[schema(rename = "rememberMe")]
        pub remember_me: Option<bool>,
    }

    #[derive(ToSchema)]
    pub struct PaymentStarted {
        pub id: String,
        pub status: String,
        pub redirect_url: String,
    }

    #[derive(ToSchema)]
    pub struct PaymentEventData {
        /// The order's correlation_id.
        pub reference: String,
        pub payment_id: String,
        pub provider: String,
        pub amount_minor: i64,
        pub currency: String,
    }

    #[derive(ToSchema)]
    pub struct PaymentEvent {
        pub id: String,
        /// payment_captured or payment_declined.
        #[schema(rename = "type")]
        pub kind: String,
        pub data: PaymentEventData,
    }

    #[derive(ToSchema)]
    pub struct CreditBody {
        #[schema(minimum = 1, example = 1002)]
        pub client_id: i64,
        /// Positive points: decimal text (`"100"`, `"12.345"`), or a JSON number read
        /// exactly as the decimal it writes (`12.345`, never through a double).
        #[schema(example = "100")]
        pub points: String,
        #[schema(example = "gift-card:example-1")]
        pub reference: String,
        /// gift_card.
        #[schema(pattern = "^gift_card$", example = "gift_card")]
        pub reason: String,
    }

    #[derive(ToSchema)]
    pub struct Credited {
        pub client_id: i64,
        pub points: String,
        pub reference: String,
        pub balance: String,
    }
}

pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi().merge_from(server::ops::openapi());
    envelope::schema::add_door_answers(&mut doc, envelope::Envelope::B);
    doc
}

/// `/point-orders/description` comes before `/point-orders/{correlation_id}`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/api/v2/client/points").route(web::get().to(points::balance)))
        .service(
            web::resource("/api/v2/client/point-history").route(web::get().to(points::history)),
        )
        .service(web::resource("/api/v2/client/points-faq").route(web::get().to(points::faq)))
        .service(web::resource("/api/v2/client/point-offers").route(web::get().to(catalog::offers)))
        .service(
            web::resource("/api/v2/client/point-offers/{id}").route(web::get().to(catalog::offer)),
        )
        .service(
            web::resource("/api/v2/client/point-occasions")
                .route(web::get().to(catalog::occasions)),
        )
        .service(web::resource("/api/v2/client/point-orders").route(web::post().to(orders::create)))
        .service(
            web::resource("/api/v2/client/point-orders/description")
                .route(web::post().to(orders::description)),
        )
        .service(
            web::resource("/api/v2/client/point-orders/{correlation_id}")
                .route(web::get().to(orders::get)),
        )
        .service(
            web::resource("/api/v2/client/point-orders/{correlation_id}/pay/card")
                .route(web::post().to(pay::card)),
        )
        .service(
            web::resource("/api/v2/client/point-orders/{correlation_id}/pay/session")
                .route(web::post().to(pay::session)),
        )
        .service(web::resource("/webhooks/v1/payments").route(web::post().to(webhook::payments)))
        .service(web::resource("/internal/v1/credits").route(web::post().to(internal::credit)));
}
