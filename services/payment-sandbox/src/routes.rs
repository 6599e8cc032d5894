//! The sandbox's route list, from which its router and its OpenAPI document are both built
//! (`server::routes`), and the document itself.

use std::sync::LazyLock;

use actix_web::web;
use server::{Audience, Routes, route, scope, tagged};
use utoipa::OpenApi;

use crate::handlers::{payments, sessions, settlements, three_ds};
use crate::ops;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "payment-sandbox",
        description = "Plays the payment service for development and tests, never in production: card \
                       payments and sessions, the read-back routes the point service reconciles with, a \
                       3-D Secure page, and the signed webhook to the point service. The card id decides \
                       what happens: `decline…` is declined, `fail4xx…` is 402, `fail5xx…` is 500, \
                       `silent…` is captured with no webhook ever sent, `lost…` is captured with no \
                       webhook and answered 502, `latelost<N>…` and `latedecline<N>…` (N: 1 to 600 \
                       seconds) are held N seconds, past the caller's wait, and answered 502, and \
                       their payment is made captured (declined) with no webhook only after the \
                       first read of its reference since the call, which finds nothing (ten minutes \
                       after the call without one; made even if the caller hung up); anything \
                       else waits on its 3-D Secure page (or is captured at once with \
                       SANDBOX_AUTO_CAPTURE=true). Errors are \
                       {\"error\": {\"code\", \"message\"}}."
    ),
    // The routes' refusals name it from their answer types (`crate::error::answers`).
    components(schemas(crate::error::ErrorBody)),
    tags(
        (name = "payments", description = "Card payments"),
        (name = "sessions", description = "Payment sessions"),
        (
            name = "read-back",
            description = "What the gateway took, whatever became of its webhooks"
        ),
        (name = "3-D Secure", description = "The page the client opens and its buttons (HTML)"),
    )
)]
struct ApiDoc;

static ROUTES: LazyLock<Routes> = LazyLock::new(|| {
    Routes::new([
        scope(
            Audience::Development,
            "/v1",
            [
                tagged("payments", [route!(payments::create_payment)]),
                tagged(
                    "read-back",
                    [
                        route!(payments::list_payments_by_reference),
                        route!(payments::get_payment),
                        route!(settlements::get_settlement),
                    ],
                ),
                tagged(
                    "sessions",
                    [
                        route!(sessions::create_payment_session),
                        route!(sessions::get_payment_session),
                    ],
                ),
            ]
            .concat(),
        ),
        scope(
            Audience::Development,
            "/3ds",
            tagged(
                "3-D Secure",
                [
                    route!(three_ds::show_3ds_page),
                    route!(three_ds::approve_3ds),
                    route!(three_ds::decline_3ds),
                ],
            ),
        ),
    ])
});

/// Every route of the sandbox but the operational ones, each with its operation.
pub fn routes() -> &'static Routes {
    &ROUTES
}

/// The whole document: the routes' operations and the operational routes'.
pub fn openapi() -> utoipa::openapi::OpenApi {
    ROUTES
        .document(ApiDoc::openapi())
        .merge_from(ops::openapi())
}

pub fn configure(cfg: &mut web::ServiceConfig, document: server::ops::Document) {
    ops::configure(cfg, document);
    ROUTES.configure(cfg);
}
