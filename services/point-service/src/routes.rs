//! The service's route list, from which its router and its OpenAPI document are built
//! (`server::routes`). The app reaches the /api/v2/client routes only through the order
//! service's relay: their contract (paths, operations, answers) is `relayed_routes`, which
//! both services list, each route here served by its handler.

use std::sync::LazyLock;

use ::back_office::keeper::Keeping;
use ::back_office::routes::Route as BackOfficeRoute;
use actix_web::{FromRequest, Handler, Responder, web};
use relayed_routes::{PREFIX, Route};
use server::token_schemes::{LEGACY, SERVICE_CREDENTIAL};
use server::{Audience, Routes, ServiceApp, route, scope, tagged};
use utoipa::{IntoResponses, OpenApi};

use crate::SERVICE;
use crate::handlers::{back_office, internal, offers, orders, pay, points, webhook};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "point-service",
        description = "The points ledger, offers, occasions, point orders, card payments and the payment webhook. \
                       The app reaches the /api/v2/client routes through the order service's relay. Errors use \
                       envelope B: {success: false, error: {code, message, details?}}. Every /api/v2/client route \
                       resolves the caller through the auth service's /api/v1/users with the caller's Authorization."
    ),
    // The back office's internal routes answer in the operator API's envelope.
    components(schemas(envelope::OperatorError)),
    modifiers(&LEGACY, &SERVICE_CREDENTIAL),
)]
struct ApiDoc;

/// The internal routes' scope: the credits, and the back office under it.
const INTERNAL_SCOPE: &str = "/internal/v1";

static ROUTES: LazyLock<Routes> = LazyLock::new(|| {
    let keeping = Keeping::new(INTERNAL_SCOPE, crate::error::DatabaseAnswers::responses());
    Routes::new([
        // The app reaches these through the order service's relay, never here.
        scope(Audience::Internal, PREFIX, Route::ALL.map(served)),
        scope(
            Audience::Internal,
            "/webhooks/v1",
            tagged("payments", [route!(webhook::receive_payment_event)]),
        ),
        // One scope: actix would not look past a scope whose prefix matched. The operator
        // service relays the back office's operator routes to `/back-office`.
        scope(
            Audience::Internal,
            INTERNAL_SCOPE,
            tagged(
                "internal",
                [route!(internal::credit_points).taking(&SERVICE_CREDENTIAL)],
            )
            .into_iter()
            .chain(
                BackOfficeRoute::ALL
                    .into_iter()
                    .filter_map(|route| kept(&keeping, route)),
            ),
        ),
    ])
});

/// A relayed route with its handler; each route of the contract has one.
fn served(route: Route) -> server::Route {
    match route {
        Route::Balance => serve(route, points::balance),
        Route::History => serve(route, points::history),
        Route::Faq => serve(route, points::faq),
        Route::Offers => serve(route, offers::offers),
        Route::Offer => serve(route, offers::offer),
        Route::Occasions => serve(route, offers::occasions),
        Route::CreateOrder => serve(route, orders::create),
        Route::Description => serve(route, orders::description),
        Route::Order => serve(route, orders::get),
        Route::PayCard => serve(route, pay::pay::<pay::Card>),
        Route::PaySession => serve(route, pay::pay::<pay::Session>),
    }
}

/// A back-office route with its handler, if the table gives it to the point service.
fn kept(keeping: &Keeping, route: BackOfficeRoute) -> Option<server::Route> {
    use BackOfficeRoute::*;
    Some(match route {
        ListOffers => keeping.serve(route, back_office::list_offers),
        CreateOffer => keeping.serve(route, back_office::create_offer),
        UpdateOffer => keeping.serve(route, back_office::update_offer),
        WithdrawOffer => keeping.serve(route, back_office::withdraw_offer),
        PointsAudit => keeping.serve(route, back_office::audit_trail),
        ClientPoints => keeping.serve(route, back_office::client_points),
        ClientReads => keeping.serve(route, back_office::client_reads),
        AdjustPoints => keeping.serve(route, back_office::adjust),
        ListOccasions => keeping.serve(route, back_office::list_occasions),
        CreateOccasion => keeping.serve(route, back_office::create_occasion),
        UpdateOccasion => keeping.serve(route, back_office::update_occasion),
        WithdrawOccasion => keeping.serve(route, back_office::withdraw_occasion),
        ExpiryPolicy => keeping.serve(route, back_office::expiry_policy),
        ReplaceExpiryPolicy => keeping.serve(route, back_office::replace_expiry_policy),
        DryRunExpiryPolicy => keeping.serve(route, back_office::dry_run_expiry_policy),
        // The order service keeps these.
        ListBatches | IssueBatch | Batch | ExportBatch | WithdrawBatch | EarnRates
        | ReplaceEarnRates | CatalogAudit => return None,
    })
}

/// The route of the contract's operation, answered by `handler`.
fn serve<F, Args>(route: Route, handler: F) -> server::Route
where
    F: Handler<Args> + Send + Sync,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    let contract = route.contract();
    server::Route::new(
        contract.method.clone(),
        contract.path.as_str(),
        contract.operation.clone(),
        move || web::route().to(handler.clone()),
    )
    .with_schemas(contract.schemas.iter().cloned())
}

/// Every route of the service, each with its operation.
pub fn routes() -> &'static Routes {
    &ROUTES
}

/// The service as the shared app serves it: its routes and the document built from them.
pub fn app() -> ServiceApp {
    ServiceApp::new(SERVICE, envelope::Envelope::B, &ROUTES, ApiDoc::openapi())
}
