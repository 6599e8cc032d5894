//! The service's one route table and its OpenAPI document.

use actix_web::web;
use utoipa::OpenApi;

use crate::handlers::{catalog, gift_cards, stores};
use crate::relay;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "order-service",
        description = "The app's single address for /api/v2/client.\n\n\
                       **Relayed point routes** (tag `relayed point routes`): balance, history, FAQ, offers, offer by \
                       id, occasions, point orders (create, get, description) and the two pay routes go to the point \
                       service unchanged (same method, path, query and body; its status, Content-Type and body come \
                       back unchanged, whatever their status and content type: the order service never rewrites \
                       them); their answers are the point service's (see its document), in envelope B \
                       `{success: false, error: {code, message, details?}}`. The request target (path and query) \
                       goes to the point service byte for byte as sent: no dot-segment removal, no `\\` read as \
                       `/`, no decoding or re-encoding; a target that cannot be sent so is not relayed (400 \
                       `VALIDATION_ERROR` `Request target cannot be relayed unchanged`, envelope B). The relay itself answers 504 \
                       `POINT_SERVICE_TIMEOUT` after 10 s (20 s on the pay routes) and 502 `POINT_SERVICE_UNAVAILABLE` \
                       when the point service cannot be reached, both in envelope B. Nothing else is relayed (nothing \
                       under /internal or /webhooks).\n\n\
                       **The service's own routes** (earn rates, gift-card code, system categories, stores, nearest \
                       store) answer errors in envelope C `{message, statusCode}`; only the gift-card route takes a \
                       token (a legacy token on dev, resolved through the auth service).\n\n\
                       **Every route**: an unknown path is 404 `Cannot <METHOD> <path>`, a method the path does not \
                       serve is 405 `Method Not Allowed` (with `Allow`), a request body over 64 KiB is 413 \
                       `Payload Too Large` (also on the relayed routes, whose body is read before it is relayed), all \
                       in envelope C. A database answer of 503 `The service is busy, try again` means the pool is \
                       exhausted or a deadlock or lock timeout happened; a 500 shows the raw error text outside \
                       production and `Internal server error` in production."
    ),
    paths(
        catalog::point_rates, gift_cards::redeem, catalog::home, catalog::detail, catalog::children,
        stores::store, stores::branches, stores::nearest,
    ),
    components(schemas(envelope::schema::DocErrorB, envelope::schema::DocErrorC)),
    modifiers(&Security, &Relayed),
    tags(
        (name = "relayed point routes", description = "Relayed to the point service unchanged; see the point service's document for each route's answers."),
        (name = "earn rates", description = "Served by the order service; no token."),
        (name = "gift cards", description = "Served by the order service; legacy token."),
        (name = "services", description = "System categories as the app sees them; no token."),
        (name = "stores", description = "Store detail, a brand's branches and the nearest branch; no token."),
    ),
)]
struct ApiDoc;

/// The legacy bearer token of the gift-card route (and of the relayed point routes, which
/// the point service checks).
struct Security;

impl utoipa::Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
        let mut legacy = Http::new(HttpAuthScheme::Bearer);
        legacy.description = Some(
            "A legacy token (dev): what the auth service's /api/v1/users accepts; a primary token gets 401 \
             `Invalid or expired token`."
                .into(),
        );
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme("legacy", SecurityScheme::Http(legacy));
    }
}

/// The relayed point routes, one operation per entry of [`RELAYED`], so that the document
/// lists exactly what `configure` relays. They share one handler, so they are written here
/// rather than with `#[utoipa::path]`.
struct Relayed;

impl utoipa::Modify for Relayed {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::path::HttpMethod;
        for (method, path) in RELAYED {
            let method = if method == "GET" {
                HttpMethod::Get
            } else {
                HttpMethod::Post
            };
            let operation = doc::relayed_operation(&method, path);
            openapi
                .paths
                .add_path_operation(path, vec![method], operation);
        }
    }
}

/// Request and answer shapes for the document only (the handlers read bodies as raw JSON
/// and write answers from their own types; these mirror them key for key, in order).
pub mod doc {
    use utoipa::ToSchema;
    use utoipa::openapi::path::{HttpMethod, Operation, Parameter, ParameterIn};
    use utoipa::openapi::request_body::RequestBody;
    use utoipa::openapi::schema::{AnyOf, Schema, SchemaType};
    use utoipa::openapi::security::SecurityRequirement;
    use utoipa::openapi::{Content, Object, Ref, Required, Response, Type};

    /// An earn-rate row. The three values are copied from the stored option as they are
    /// (numbers or null as the spec has them).
    #[derive(ToSchema)]
    pub struct Rate {
        /// Start of the range in SAR; null counts as 0 when sorting.
        #[schema(required)]
        pub amount_from: Option<f64>,
        /// End of the range; null on the last row.
        #[schema(required)]
        pub amount_to: Option<f64>,
        /// Points earned when the order total falls in the range.
        pub point_earn: f64,
    }

    #[derive(ToSchema)]
    pub struct RedeemBody {
        /// The gift-card code: trimmed, 1 to 100 characters.
        #[schema(min_length = 1, max_length = 100, example = "RAMADAN-250")]
        pub code: String,
    }

    /// The answer to a redemption, in this key order.
    #[derive(ToSchema)]
    pub struct Redeemed {
        /// Always `The code was redeemed`.
        pub message: String,
        /// The code as redeemed (trimmed).
        pub code: String,
        /// The points credited, as points text.
        pub points: String,
    }

    /// A client service item: the ten fields, in this order. No hierarchy field goes to
    /// clients.
    #[derive(ToSchema)]
    pub struct ServiceItem {
        pub id: i64,
        /// Arabic name.
        pub title: String,
        /// English name.
        #[schema(rename = "titleTranslated")]
        pub title_translated: String,
        /// URL; `image_en` instead with `language=en-GB` when set; `""` when none.
        pub image: String,
        /// URL; `thumbnail_en` instead with `language=en-GB` when set; `""` when none.
        pub thumbnail: String,
        /// `""` when none.
        pub url: String,
        /// `""` when none.
        pub background_image_url: String,
        /// `default` seen.
        #[schema(rename = "serviceType")]
        pub service_type: String,
        /// `active` or `hidden`.
        pub status: String,
        pub ordering: i32,
    }

    /// `{data}`: never paginated, no metadata block.
    #[derive(ToSchema)]
    pub struct ServiceList {
        pub data: Vec<ServiceItem>,
    }

    /// A service's detail: the ten fields of a client service item, then `logo`.
    #[derive(ToSchema)]
    pub struct ServiceDetail {
        pub id: i64,
        pub title: String,
        #[schema(rename = "titleTranslated")]
        pub title_translated: String,
        pub image: String,
        pub thumbnail: String,
        pub url: String,
        pub background_image_url: String,
        #[schema(rename = "serviceType")]
        pub service_type: String,
        pub status: String,
        pub ordering: i32,
        /// URL.
        pub logo: String,
    }

    /// A store, in this key order.
    #[derive(ToSchema)]
    pub struct Store {
        /// The store id (a store banner's `merchant_id`, or nearest store's `store_id`).
        pub id: i64,
        /// The store's collection (brand) id.
        pub merchant_id: i64,
        pub name: String,
        #[schema(required)]
        pub latitude: Option<f64>,
        #[schema(required)]
        pub longitude: Option<f64>,
        /// Always `active` here (inactive stores are not served).
        pub management_status: String,
        /// Null counts as offline.
        #[schema(required)]
        pub is_online: Option<bool>,
        pub store_disabled_ordering: bool,
    }

    /// `{data}`: the brand's active stores by id.
    #[derive(ToSchema)]
    pub struct StoreList {
        pub data: Vec<Store>,
    }

    /// `{"store_id": 10}` or `{"store_id": null}`.
    #[derive(ToSchema)]
    pub struct NearestStore {
        #[schema(required)]
        pub store_id: Option<i64>,
    }

    /// What each relayed route does (its summary) and the query keys the point service reads
    /// on it (the relay passes any query on as it came).
    fn relayed_route(path: &str) -> (&'static str, &'static [(&'static str, &'static str)]) {
        match path.trim_start_matches("/api/v2/client") {
            "/points" => ("The caller's point balance", &[]),
            "/point-history" => (
                "The caller's point history, newest first",
                &[("page", "default 1"), ("limit", "default 20, at most 100")],
            ),
            "/points-faq" => ("Points questions and answers", &[]),
            "/point-offers" => ("Active point offers (query keys are ignored)", &[]),
            "/point-offers/{id}" => ("One point offer", &[]),
            "/point-occasions" => (
                "Active point occasions",
                &[("language", "`ar` (trimmed, any case) for Arabic labels")],
            ),
            "/point-orders" => (
                "Create a point order (`point` settles at once, `checkout` waits for payment)",
                &[],
            ),
            "/point-orders/description" => ("Compose the gift message text (writes nothing)", &[]),
            "/point-orders/{correlation_id}" => ("One point order (payer or recipient)", &[]),
            "/point-orders/{correlation_id}/pay/card" => {
                ("Pay a checkout order with a saved card (3-D Secure)", &[])
            }
            "/point-orders/{correlation_id}/pay/session" => {
                ("Start a payment session for a new card or a wallet", &[])
            }
            _ => ("A relayed point route", &[]),
        }
    }

    fn error_b(description: &str) -> Response {
        Response::builder()
            .description(description)
            .content(
                "application/json",
                Content::new(Some(Ref::from_schema_name("ErrorB"))),
            )
            .build()
    }

    /// One relayed route: its path parameters and query keys, the legacy token, an opaque
    /// body on POST, the point service's answers passed through, and the relay's own 502,
    /// 504 (envelope B) and 413 (envelope C).
    pub(super) fn relayed_operation(method: &HttpMethod, path: &str) -> Operation {
        let (summary, query) = relayed_route(path);
        let pay = crate::relay::is_pay_route(path);
        let wait = if pay {
            "20 s (POINT_SERVICE_PAY_TIMEOUT_MS)"
        } else {
            "10 s (POINT_SERVICE_TIMEOUT_MS)"
        };
        let mut parameters: Vec<Parameter> = path
            .split('/')
            .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
            .map(|name| {
                let description = match name {
                    "correlation_id" => "the order's correlation_id (a UUID); passed on as sent",
                    "id" => "the offer id: 24 hex characters, either case; passed on as sent",
                    _ => "passed on as sent",
                };
                // Examples from the demo data: an offer, and Sara's legacy order.
                let example = match name {
                    "correlation_id" => "6f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11",
                    _ => "64b7f0c2a1b2c3d4e5f60718",
                };
                Parameter::builder()
                    .name(name)
                    .parameter_in(ParameterIn::Path)
                    .required(Required::True)
                    .schema(Some(Object::with_type(Type::String)))
                    .description(Some(description))
                    .example(Some(serde_json::json!(example)))
                    .build()
            })
            .collect();
        parameters.extend(query.iter().map(|(name, description)| {
            Parameter::builder()
                .name(*name)
                .parameter_in(ParameterIn::Query)
                .required(Required::False)
                .schema(Some(Object::with_type(Type::String)))
                .description(Some(format!("read by the point service: {description}")))
                .build()
        }));
        if path.ends_with("/point-orders") {
            parameters.push(
                Parameter::builder()
                    .name("Idempotency-Key")
                    .parameter_in(ParameterIn::Header)
                    .required(Required::False)
                    .schema(Some(Object::with_type(Type::String)))
                    .description(Some(
                        "forwarded; read by the point service (1 to 255 characters, per caller, 24 hours)",
                    ))
                    .build(),
            );
        }
        let body = (*method == HttpMethod::Post).then(|| {
            RequestBody::builder()
                .description(Some(
                    "sent to the point service as it came (read whole, never parsed); its shape is in the \
                     point service's document",
                ))
                .required(Some(Required::False))
                .content("application/json", Content::new(Some(Object::new())))
                .build()
        });
        Operation::builder()
            .tag("relayed point routes")
            .operation_id(Some(format!(
                "relay_{}{}",
                if *method == HttpMethod::Get { "get" } else { "post" },
                path.trim_start_matches("/api/v2/client")
                    .replace(['/', '-'], "_")
                    .replace(['{', '}'], "")
            )))
            .summary(Some(format!("{summary} (relayed)")))
            .description(Some(format!(
                "Relayed to the point service unchanged: the same method, request target (path and query, \
                 byte for byte) and body, with the \
                 request headers {} (and `traceparent`/`tracestate` from the relay's own span); the point \
                 service's status, Content-Type and body come back unchanged, the body streamed. The answers \
                 below other than 502, 504 and 413 are the point service's own; see its document for this \
                 route's exact statuses and messages. The relay waits {wait} for the point service.",
                crate::relay::FORWARDED_HEADERS
                    .map(|name| format!("`{name}`"))
                    .join(", ")
            )))
            .parameters(Some(parameters))
            .request_body(body)
            .security(SecurityRequirement::new("legacy", Vec::<String>::new()))
            .response(
                "200",
                Response::builder()
                    .description(
                        "the point service's answer, as it came (see its document for the shape: an \
                         object, or a bare array for the offers, the occasions and the FAQ)",
                    )
                    .content(
                        "application/json",
                        Content::new(Some(Object::with_type(SchemaType::AnyValue))),
                    )
                    .build(),
            )
            .response(
                "400",
                Response::builder()
                    .description(format!(
                        "the point service's own 400 (envelope B; see its document for this route's \
                         messages), relayed unchanged; or, made by the order service before anything is \
                         relayed: `VALIDATION_ERROR` `Request target cannot be relayed unchanged` (envelope \
                         B) for a request target that cannot go to the point service byte for byte, or {} \
                         (envelope C)",
                        envelope::schema::door_400_description()
                    ))
                    .content(
                        "application/json",
                        Content::new(Some(Schema::AnyOf(
                            AnyOf::builder()
                                .item(Ref::from_schema_name("ErrorB"))
                                .item(Ref::from_schema_name("ErrorC"))
                                .build(),
                        ))),
                    )
                    .build(),
            )
            .response(
                "4XX",
                error_b(if pay {
                    "the point service's own 4xx (401 for the caller, 400, 403 when card payment is off, 404, \
                     409), or a 4xx of the payment service that it passes on with its own status and body; \
                     relayed unchanged"
                } else {
                    "the point service's own 4xx (401 `Missing or invalid authorization header` or \
                     `Invalid or expired token` for the caller; the others as its document says for this \
                     route), relayed unchanged"
                }),
            )
            .response(
                "413",
                Response::builder()
                    .description(
                        "`Payload Too Large` (envelope C, made by the order service): the request body is \
                         over 64 KiB; nothing is relayed",
                    )
                    .content(
                        "application/json",
                        Content::new(Some(Ref::from_schema_name("ErrorC"))),
                    )
                    .build(),
            )
            .response(
                "5XX",
                error_b(
                    "the point service's own 5xx (500 `INTERNAL_ERROR` `Internal server error` or \
                     `AUTH_SERVICE_URL not set`; 503 `The service is busy, try again`), relayed unchanged",
                ),
            )
            .response(
                "502",
                error_b(
                    "`POINT_SERVICE_UNAVAILABLE` `Point service unavailable: <error text>` (the error and its \
                     causes on one line): the point service could not be reached (refused, reset, DNS); made \
                     by the order service",
                ),
            )
            .response(
                "504",
                error_b(&format!(
                    "`POINT_SERVICE_TIMEOUT` `Point service did not respond in time; the request outcome is \
                     unknown`: no answer within {wait}; made by the order service. The outcome is unknown: \
                     reads, description and pay/session are safe to retry; after a create or pay/card 504, \
                     read the balance, history or order before trying again"
                )),
            )
            .build()
    }
}

pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi().merge_from(server::ops::openapi());
    envelope::schema::add_door_answers(&mut doc, envelope::Envelope::C);
    doc
}

/// The relayed point routes, each with its method; nothing else is relayed.
const RELAYED: [(&str, &str); 11] = [
    ("GET", "/api/v2/client/points"),
    ("GET", "/api/v2/client/point-history"),
    ("GET", "/api/v2/client/points-faq"),
    ("GET", "/api/v2/client/point-offers"),
    ("GET", "/api/v2/client/point-offers/{id}"),
    ("GET", "/api/v2/client/point-occasions"),
    ("POST", "/api/v2/client/point-orders"),
    ("POST", "/api/v2/client/point-orders/description"),
    ("GET", "/api/v2/client/point-orders/{correlation_id}"),
    (
        "POST",
        "/api/v2/client/point-orders/{correlation_id}/pay/card",
    ),
    (
        "POST",
        "/api/v2/client/point-orders/{correlation_id}/pay/session",
    ),
];

pub fn configure(cfg: &mut web::ServiceConfig) {
    for (method, path) in RELAYED {
        let pay = crate::relay::is_pay_route(path);
        let (route, relayed) = if method == "GET" {
            (web::get(), relay::Route::get(path, pay))
        } else {
            (web::post(), relay::Route::post(path, pay))
        };
        let handler =
            move |state: web::Data<crate::state::AppState>,
                  req: actix_web::HttpRequest,
                  body: web::Bytes| relay::relay(state, req, body, relayed);
        cfg.service(web::resource(path).route(route.to(handler)));
    }
    cfg.service(
        web::resource("/api/v2/client/system_configs/point_rates")
            .route(web::get().to(catalog::point_rates)),
    )
    .service(
        web::resource("/api/v2/client/gift-card-code").route(web::post().to(gift_cards::redeem)),
    )
    .service(web::resource("/api/v2/client/system-categories").route(web::get().to(catalog::home)))
    .service(
        web::resource("/api/v2/client/system-categories/{id}")
            .route(web::get().to(catalog::detail)),
    )
    .service(
        web::resource("/api/v2/client/system-categories/{id}/children")
            .route(web::get().to(catalog::children)),
    )
    .service(web::resource("/api/v2/client/stores").route(web::get().to(stores::branches)))
    .service(web::resource("/api/v2/client/stores/{id}").route(web::get().to(stores::store)))
    .service(
        web::resource("/api/v2/client/banners/merchant/{merchant_id}/nearest-store")
            .route(web::get().to(stores::nearest)),
    );
}
