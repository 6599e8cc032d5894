//! The service's route list, from which its router and its OpenAPI document are built
//! (`server::routes`).

use std::sync::LazyLock;

use ::back_office::role::Admits;
use server::{Audience, Routes, ServiceApp, route, scope, tagged};
use utoipa::OpenApi;

use crate::SERVICE;
use crate::auth::{AccessRefusal, SCHEME};
use crate::back_office;
use crate::error::shown_body;
use crate::hierarchy::handlers;
use crate::hierarchy::lookup::ServiceRefusal;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "operator-service",
        description = &description()
    ),
    components(schemas(envelope::OperatorError)),
    modifiers(&SCHEME),
    tags(
        (name = "services", description = "Services and their place in the hierarchy."),
        (name = "children",
            description = "A parent's children: candidates, assign and unassign (admin, super_admin)."),
        (name = "audit",
            description = "Every write, who made it, and the hierarchy before and after (admin, super_admin)."),
        (name = "offers", description = "The loyalty back office: the point offers the app sells (kept by the point \
            service, which owns points data, as are occasions, the expiry policy and clients' points)."),
        (name = "occasions", description = "The loyalty back office: the occasions a gift may name."),
        (name = "expiry policy", description = "The loyalty back office: whether and when unused points expire."),
        (name = "client support", description = "The loyalty back office: a client's points as the app shows \
            them, and adjustments of them (super_admin)."),
        (name = "gift codes", description = "The loyalty back office: gift-code batches, kept by the order service \
            (super_admin; the list admin too)."),
        (name = "earn rates", description = "The loyalty back office: the earn-rate table, kept by the order service."),
        (name = "loyalty audit", description = "The loyalty back office: the trails of every change, points data's \
            (the point service's) and the catalog's (gift codes and earn rates, the order service's)."),
    ),
)]
struct ApiDoc;

/// The document's description: the token, the errors every route shares, the lists.
fn description() -> String {
    format!(
        "Services (system categories) and their parent/child hierarchy for the admin panel, under \
         /api/v1/operator; and the loyalty back office (the other tags): the \
         programme's offers, occasions, expiry policy and earn rates, clients' points and \
         adjustments, gift-code batches and the trails of every change, kept by the point and \
         order services, to which the operator service relays each route once it has checked the \
         token and the role (a route's roles are in its security requirement).\n\n\
         **Token**: every route takes an operator JWT (`Authorization: Bearer <token>`, HS256, claims \
         `{{sub, role, exp}}`), checked before anything else: missing, bad or expired, 401 {}. The list, \
         the variant list and the detail admit all five roles (super_admin, admin, merchant_manager, \
         store_manager, data_entry); creating and changing services, the children routes and the audit \
         trail admit admin and super_admin only, other roles get 403 {}. Each operation names its roles \
         in its security requirement.\n\n\
         **Errors** are `{{statusCode, message, error}}` with `error` the status's reason phrase \
         (`Bad Request`, `Not Found`, ...). On every route: an unknown path is 404 `Cannot <METHOD> \
         <path>`, a method the path does not serve 405 `Method Not Allowed` (with `Allow`), a request \
         body over 64 KiB 413 `Payload Too Large` (refused before the token is checked), a \
         path id that is not an integer 400 `{}`; 503 `{}` when the database pool is exhausted or a \
         deadlock or lock timeout happens (on the loyalty back office's routes, in the service \
         that keeps the data too), 500 `{}` on any other failure.\n\n\
         **Lists** answer `{{data, meta: {{totalItems, page, itemsPerPage, totalPages}}}}`; `page` and \
         `limit` are never refused: unreadable or below 1 they fall back to 1 and 10, `limit` is capped \
         at 100 and `page` at 1 000 000. Rows are ordered by `ordering`, then id.",
        shown_body(&AccessRefusal::Unauthenticated),
        shown_body(&AccessRefusal::NotAdmin),
        ServiceRefusal::BadId,
        db::BUSY_MESSAGE,
        envelope::INTERNAL_MESSAGE,
    )
}

static ROUTES: LazyLock<Routes> = LazyLock::new(|| {
    Routes::new([scope(
        Audience::Admin,
        "/api/v1/operator",
        // `/services/all/without-pagination` comes before `/services/{id}`.
        [
            tagged(
                "services",
                [
                    secured(route!(handlers::services::list_services), Admits::All),
                    secured(route!(handlers::services::create_service), Admits::Admins),
                    secured(route!(handlers::services::list_all_services), Admits::All),
                    secured(route!(handlers::services::get_service), Admits::All),
                    secured(route!(handlers::services::update_service), Admits::Admins),
                ],
            ),
            tagged(
                "children",
                [
                    secured(
                        route!(handlers::children::list_child_candidates),
                        Admits::Admins,
                    ),
                    secured(route!(handlers::children::update_children), Admits::Admins),
                ],
            ),
            tagged(
                "audit",
                [secured(
                    route!(handlers::audit::list_audit_entries),
                    Admits::Admins,
                )],
            ),
        ]
        .concat()
        .into_iter()
        .chain(back_office::routes()),
    )])
});

/// A hierarchy route documented with the roles it admits (its handler checks them) and what
/// every operator route answers besides its own (`auth::document_access`).
fn secured(route: server::Route, admits: Admits) -> server::Route {
    let takes_body = server::routes::takes_body(route.method());
    route.with_operation(|operation| {
        crate::auth::document_access(operation, admits, takes_body, Default::default());
    })
}

/// Every route of the service, each with its operation.
pub fn routes() -> &'static Routes {
    &ROUTES
}

/// The service as the shared app serves it: its routes and the document built from them.
pub fn app() -> ServiceApp {
    ServiceApp::new(
        SERVICE,
        envelope::Envelope::Operator,
        &ROUTES,
        ApiDoc::openapi(),
    )
}
