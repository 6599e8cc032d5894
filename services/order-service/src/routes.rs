//! The service's route list, from which its router and its OpenAPI document are built
//! (`server::routes`): the relayed point routes (`relayed_routes`) and its own.

use std::sync::LazyLock;

use ::back_office::keeper::Keeping;
use ::back_office::routes::Route as BackOfficeRoute;

use server::token_schemes::{LEGACY, SERVICE_CREDENTIAL};
use server::{Audience, Routes, ServiceApp, route, scope, tagged};
use utoipa::{IntoResponses, OpenApi};

use crate::SERVICE;
use crate::config::{PAY_WAIT, RELAY_WAIT};
use crate::handlers::{back_office, gift_cards, point_rates, stores, system_categories};
use crate::relayed_routes;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "order-service",
        description = &description()
    ),
    components(schemas(envelope::ErrorB, envelope::ErrorC, envelope::OperatorError)),
    modifiers(&LEGACY, &SERVICE_CREDENTIAL),
    tags(
        (name = "points", description = "Balance, history, FAQ: relayed to the point service unchanged."),
        (name = "offers", description = "Point offers and occasions: relayed to the point service unchanged."),
        (name = "point orders", description = "Create, read, describe: relayed to the point service unchanged."),
        (name = "payments", description = "Paying a checkout order: relayed to the point service unchanged."),
        (name = "earn rates", description = "Served by the order service; no token."),
        (name = "gift cards", description = "Served by the order service; legacy token."),
        (name = "services", description = "System categories as the app sees them; no token."),
        (name = "stores", description = "Store detail, a brand's branches and the nearest branch; no token."),
        (name = "back-office", description = "The loyalty back office over the catalog (gift-code batches, \
            earn rates): \
            the operator service relays its operator routes here with its own credential, which \
            vouches for the operator and is bound to the one request; answers in the operator \
            API's envelope."),
    ),
)]
struct ApiDoc;

/// The document's description: the relayed routes, the service's own, what every route answers.
fn description() -> String {
    format!(
        "The app's single address for /api/v2/client.\n\n\
         **Relayed point routes** (tags `points`, `offers`, `point orders`, `payments`; each \
         operation named as at the point service): balance, history, FAQ, offers, offer by \
         id, occasions, point orders (create, get, description) and the two pay routes go to the point \
         service unchanged (same method, path, query and body; its status, Content-Type and body come \
         back unchanged, whatever their status and content type: the order service never rewrites \
         them); each is documented here with the point service's own parameters, bodies, answers and \
         schemas (from the same definition as its document), in envelope B \
         `{{success: false, error: {{code, message, details?}}}}`. The request target (path and query) \
         goes to the point service byte for byte as sent: no dot-segment removal, no `\\` read as \
         `/`, no decoding or re-encoding; a target that cannot be sent so is not relayed (400 \
         `VALIDATION_ERROR`, envelope B). The relay itself answers 504 `POINT_SERVICE_TIMEOUT` after \
         {} s ({} s on the pay routes) and 502 `POINT_SERVICE_UNAVAILABLE` when the point service \
         cannot be reached, both in envelope B. Nothing else is relayed (nothing under /internal or \
         /webhooks).\n\n\
         **The service's own routes** (earn rates, gift-card code, system categories, stores, nearest \
         store) answer errors in envelope C `{{message, statusCode}}`; only the gift-card route takes a \
         token (a legacy token on dev, resolved through the auth service).\n\n\
         **Every route**: an unknown path is 404 `Cannot <METHOD> <path>`, a method the path does not \
         serve is 405 `Method Not Allowed` (with `Allow`), a request body over 64 KiB is 413 \
         `Payload Too Large` (also on the relayed routes, whose body is read before it is relayed), all \
         in envelope C. A database answer of 503 `The service is busy, try again` means the pool is \
         exhausted or a deadlock or lock timeout happened; a 500 shows the raw error text outside \
         production and a fixed message in production (each route's 500 names it).",
        RELAY_WAIT.as_secs(),
        PAY_WAIT.as_secs(),
    )
}

/// The service as the shared app serves it: its routes and the document built from them.
pub fn app() -> ServiceApp {
    ServiceApp::new(SERVICE, envelope::Envelope::C, &ROUTES, ApiDoc::openapi())
}

static ROUTES: LazyLock<Routes> = LazyLock::new(|| {
    let keeping = Keeping::new(INTERNAL_SCOPE, crate::error::DatabaseAnswers::responses());
    Routes::new([
        scope(
            Audience::App,
            relayed_routes::PREFIX,
            relayed_routes::routes().chain(
                [
                    tagged("earn rates", [route!(point_rates::list_earn_rates)]),
                    tagged(
                        "gift cards",
                        [route!(gift_cards::redeem_gift_card_code).taking(&LEGACY)],
                    ),
                    tagged(
                        "services",
                        [
                            route!(system_categories::list_home_services),
                            route!(system_categories::get_service),
                            route!(system_categories::list_child_services),
                        ]
                        .map(server::Route::answering::<system_categories::LanguageAnswers>),
                    ),
                    tagged(
                        "stores",
                        [
                            route!(stores::list_branches),
                            route!(stores::get_store),
                            route!(stores::find_nearest_store),
                        ],
                    ),
                ]
                .concat(),
            ),
        ),
        // The operator service relays the back office's catalog routes here.
        scope(
            Audience::Internal,
            INTERNAL_SCOPE,
            BackOfficeRoute::ALL
                .into_iter()
                .filter_map(|route| kept(&keeping, route)),
        ),
    ])
});

/// The internal routes' scope: the back office under it.
const INTERNAL_SCOPE: &str = "/internal/v1";

/// A back-office route with its handler, if the table gives it to the order service.
fn kept(keeping: &Keeping, route: BackOfficeRoute) -> Option<server::Route> {
    use BackOfficeRoute::*;
    Some(match route {
        ListBatches => keeping.serve(route, back_office::list_batches),
        IssueBatch => keeping.serve(route, back_office::issue_batch),
        Batch => keeping.serve(route, back_office::batch_codes),
        ExportBatch => keeping.serve(route, back_office::batch_csv),
        WithdrawBatch => keeping.serve(route, back_office::withdraw_batch),
        EarnRates => keeping.serve(route, back_office::earn_rates),
        ReplaceEarnRates => keeping.serve(route, back_office::replace_earn_rates),
        CatalogAudit => keeping.serve(route, back_office::audit_trail),
        // The point service keeps these.
        ListOffers | CreateOffer | UpdateOffer | WithdrawOffer | PointsAudit | ClientPoints
        | ClientReads | AdjustPoints | ListOccasions | CreateOccasion | UpdateOccasion
        | WithdrawOccasion | ExpiryPolicy | ReplaceExpiryPolicy | DryRunExpiryPolicy => {
            return None;
        }
    })
}

/// Every route of the service, the relayed ones included, each with its operation.
pub fn routes() -> &'static Routes {
    &ROUTES
}
