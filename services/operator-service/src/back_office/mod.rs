//! The loyalty back office: the operator routes over loyalty data, served from the route
//! table (`back_office::routes`) by one relay handler ([`relay`]) to the service that keeps
//! the data ([`upstream`]). Each route's document is its operation from the table, with
//! what every back-office route answers besides: the security requirement and 403 of the
//! roles it admits, 401, 413 for a body, 500, 503, and the relay's own 500, 502 and 504.

pub mod relay;
pub mod upstream;

use actix_web::{HttpRequest, web};
use back_office::routes::{Contract, Route};
use utoipa::IntoResponses;
use utoipa::openapi::path::Operation;

use crate::auth::Operator;
use crate::state::AppState;
use upstream::UpstreamRefusal;

/// Every back-office route, relative to the operator scope, in the table's order.
pub fn routes() -> impl Iterator<Item = server::Route> {
    Route::ALL.into_iter().map(served)
}

fn served(route: Route) -> server::Route {
    let contract = route.contract();
    let operation = operation(route, contract);
    let path = contract.path.as_str();
    let method = contract.method.clone();
    let route = if contract.takes_body() {
        // The only routes that read a body (the door refuses one over 64 KiB before the
        // token is checked: `crate::error::TOO_LARGE_413`).
        let handler = move |operator: Operator,
                            state: web::Data<AppState>,
                            req: HttpRequest,
                            body: web::Bytes| {
            relay::relay(route, operator, state, req, Some(body))
        };
        server::Route::new(method, path, operation, move || web::route().to(handler))
    } else {
        let handler = move |operator: Operator, state: web::Data<AppState>, req: HttpRequest| {
            relay::relay(route, operator, state, req, None)
        };
        server::Route::new(method, path, operation, move || web::route().to(handler))
    };
    route.with_schemas(contract.schemas.iter().cloned())
}

/// The contract's operation with the security requirement, the answers every operator
/// route shares and the relay's own.
fn operation(route: Route, contract: &Contract) -> Operation {
    let mut operation = contract.operation.clone();
    crate::auth::document_access(
        &mut operation,
        route.rule().admits,
        contract.takes_body(),
        UpstreamRefusal::responses(),
    );
    operation
}
