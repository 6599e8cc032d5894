//! The service's route list, from which its router and its OpenAPI document are built
//! (`server::routes`). The app reaches the /api/v2/client routes only through the order
//! service's relay, which relays exactly those of [`CLIENT`] and documents them from here.

use std::sync::LazyLock;

use server::token_schemes::BearerScheme;
use server::{Routes, ServiceApp, route, scope};
use utoipa::OpenApi;

use crate::SERVICE;
use crate::handlers::{internal, offers, orders, pay, points, webhook};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "point-service",
        description = "The points ledger, offers, occasions, point orders, card payments and the payment webhook. \
                       The app reaches the /api/v2/client routes through the order service's relay. Errors use \
                       envelope B: {success: false, error: {code, message, details?}}. Every /api/v2/client route \
                       resolves the caller through the auth service's /api/v1/users with the caller's Authorization."
    ),
    modifiers(&LEGACY),
)]
struct ApiDoc;

/// The legacy bearer token of the /api/v2/client routes.
const LEGACY: BearerScheme = BearerScheme::opaque(
    "legacy",
    "A legacy token (dev): what the auth service's /api/v1/users accepts.",
);

/// The prefix of the app's routes (the ones the order service relays).
pub const CLIENT: &str = "/api/v2/client";

static ROUTES: LazyLock<Routes> = LazyLock::new(|| {
    Routes::new([
        // `/point-orders/description` comes before `/point-orders/{correlation_id}`.
        scope(
            CLIENT,
            [
                route!(points::balance),
                route!(points::history),
                route!(points::faq),
                route!(offers::offers),
                route!(offers::offer),
                route!(offers::occasions),
                route!(orders::create),
                route!(orders::description),
                route!(orders::get),
                route!(pay::card),
                route!(pay::session),
            ],
        ),
        scope("/webhooks/v1", [route!(webhook::payments)]),
        scope("/internal/v1", [route!(internal::credit)]),
    ])
});

/// Every route of the service, each with its operation.
pub fn routes() -> &'static Routes {
    &ROUTES
}

/// The service as the shared app serves it: its routes and the document built from them.
pub fn app() -> ServiceApp {
    ServiceApp::new(SERVICE, envelope::Envelope::B, &ROUTES, ApiDoc::openapi())
}
