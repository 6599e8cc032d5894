//! The service's route list, from which its router and its OpenAPI document are built
//! (`server::routes`).

use std::sync::LazyLock;

use server::token_schemes::{BearerScheme, LEGACY, PRIMARY, SERVICE_CREDENTIAL};
use server::{Audience, Routes, ServiceApp, route, scope, tagged};
use utoipa::OpenApi;

use crate::SERVICE;
use crate::error::{DatabaseAnswers, TokenAnswers};
use crate::handlers::{address_book, device, internal, otp, profile, tokens};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "auth-service",
        description = "Client accounts: OTP login, tokens, profile, push setting, devices, address book. \
                       Errors use envelope A: {status, message, stack?} (stack outside production only)."
    ),
    modifiers(&PRIMARY, &LEGACY, &SERVICE_CREDENTIAL),
)]
struct ApiDoc;

static ROUTES: LazyLock<Routes> = LazyLock::new(|| {
    Routes::new([
        // `/clients/{client_id}` (the profile's) comes last: it would take every path above.
        scope(
            Audience::App,
            "/api/v1",
            [
                tagged(
                    "login",
                    [route!(otp::reset_otp), route!(otp::verify_otp)]
                        .map(server::Route::answering::<DatabaseAnswers>),
                ),
                tagged(
                    "tokens",
                    [
                        token(route!(tokens::verify_token), &PRIMARY),
                        route!(tokens::exchange_token).answering::<DatabaseAnswers>(),
                        token(route!(tokens::find_client_by_phone), &PRIMARY),
                        // The point and order services' caller lookup, not the app's.
                        token(route!(tokens::get_caller), &LEGACY).for_audience(Audience::Internal),
                    ],
                ),
                tagged(
                    "address book",
                    [
                        token(route!(address_book::list_addresses), &PRIMARY),
                        token(route!(address_book::create_address), &PRIMARY),
                        token(route!(address_book::get_address), &PRIMARY),
                        token(route!(address_book::update_address), &PRIMARY),
                        token(route!(address_book::delete_address), &PRIMARY),
                    ],
                ),
                tagged(
                    "profile",
                    [
                        route!(device::add_device_id),
                        token(route!(profile::update_setting), &PRIMARY),
                        token(route!(profile::update_profile), &PRIMARY),
                    ],
                ),
            ]
            .concat(),
        ),
        // Digits only (DESIGN: the profile or 404): an id carrying `%2F`, `%5C` or anything
        // else matches no route, so a target that a proxy reads as another path after
        // decoding (`/internal/v1/clients/1%2F..%2F..%2F..%2F..%2Fapi%2Fv1%2Fclients`) never
        // reaches it.
        scope(
            Audience::Internal,
            "/internal/v1",
            tagged(
                "internal",
                [route!(internal::get_client_profile)
                    .taking(&SERVICE_CREDENTIAL)
                    .answering::<DatabaseAnswers>()],
            ),
        ),
    ])
});

/// A route that takes `scheme`'s token: documented with it and with what a token check
/// answers.
fn token(route: server::Route, scheme: &BearerScheme) -> server::Route {
    route.taking(scheme).answering::<TokenAnswers>()
}

/// Every route of the service, each with its operation.
pub fn routes() -> &'static Routes {
    &ROUTES
}

/// The service as the shared app serves it: its routes and the document built from them.
pub fn app() -> ServiceApp {
    ServiceApp::new(SERVICE, envelope::Envelope::A, &ROUTES, ApiDoc::openapi())
}
