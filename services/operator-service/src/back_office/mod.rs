//! The loyalty back office: the operator routes over loyalty data, served from the route
//! table (`back_office::routes`) by one relay handler ([`relay`]) to the service that keeps
//! the data ([`upstream`]). Each route's document is its operation from the table, with
//! what every back-office route answers besides: the security requirement and 403 of the
//! roles it admits, 401, 413 for a body, 500, 503, and the relay's own 500, 502 and 504.

pub mod relay;
pub mod upstream;

use std::collections::BTreeMap;

use actix_web::{HttpRequest, web};
use back_office::role::Admits;
use back_office::routes::{Contract, Route};
use utoipa::IntoResponses;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{RefOr, Response};

use crate::auth::Operator;
use crate::error;
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

/// The contract's operation with the security requirement and the answers every
/// back-office route shares.
fn operation(route: Route, contract: &Contract) -> Operation {
    let admits = route.rule().admits;
    let mut operation = contract.operation.clone();
    operation.security = Some(vec![SecurityRequirement::new(
        crate::auth::SCHEME.name(),
        admits.roles().map(|role| role.as_str()),
    )]);
    let mut answers = shared_answers(admits, contract.takes_body());
    answers.extend(UpstreamRefusal::responses());
    // A route's own answer of a shared status (an offer's 403 above the programme's limit)
    // is documented beside the shared one.
    envelope::openapi::merge_answers(
        &mut answers,
        std::mem::take(&mut operation.responses.responses),
    );
    operation.responses.responses = answers;
    operation
}

/// The token's 401, the role's 403, a body's 413, 500 and the busy 503.
fn shared_answers(admits: Admits, takes_body: bool) -> BTreeMap<String, RefOr<Response>> {
    let mut list = vec![("401", error::unauthorized_401())];
    match admits {
        Admits::All => {}
        Admits::Admins => list.push(("403", error::forbidden_403())),
        Admits::SuperAdmin => list.push(("403", error::forbidden_super_admin_403())),
    }
    if takes_body {
        list.push(("413", error::TOO_LARGE_413.to_owned()));
    }
    list.push(("500", error::internal_500()));
    list.push(("503", db::BUSY_ANSWER.to_owned()));
    let list: Vec<(&str, &str)> = list.iter().map(|(s, d)| (*s, d.as_str())).collect();
    envelope::openapi::answers(envelope::Envelope::Operator, &list)
}
