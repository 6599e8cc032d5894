//! The service's one route table and its OpenAPI document.

use actix_web::web;
use utoipa::OpenApi;

use crate::handlers::{catalog, gift_cards, stores};
use crate::relay::relay;

#[derive(OpenApi)]
#[openapi(info(
    title = "order-service",
    description = "The app's /api/v2/client. The point routes (points, point-history, points-faq, point-offers, \
                   point-offers/{id}, point-occasions, point-orders, point-orders/{correlation_id}, \
                   point-orders/description, point-orders/{correlation_id}/pay/card and /pay/session) are relayed to \
                   the point service unchanged (see its document); the relay answers 504 POINT_SERVICE_TIMEOUT after \
                   10 s (20 s on the pay routes) and 502 POINT_SERVICE_UNAVAILABLE when the point service cannot be \
                   reached, in envelope B. The service's own routes answer errors in envelope C {message, statusCode}: \
                   GET /system_configs/point_rates (no token), POST /gift-card-code {code} (legacy token; 404 `The code \
                   not exist`, 409 `The code has already been used`, 429 after too many wrong codes, 502 when the credit \
                   could not be confirmed — retrying credits once), GET /system-categories, GET /system-categories/{id}, \
                   GET /system-categories/{id}/children?language ({data}, cached 30 s), GET /stores/{id}, \
                   GET /stores?merchantId, GET /banners/merchant/{merchantId}/nearest-store?latitude&longitude \
                   ({store_id} or {store_id: null})."
))]
struct ApiDoc;

pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi().merge_from(server::ops::openapi())
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
        let route = if method == "GET" {
            web::get()
        } else {
            web::post()
        };
        cfg.service(web::resource(path).route(route.to(relay)));
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
