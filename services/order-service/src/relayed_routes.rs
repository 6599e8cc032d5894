//! The relayed point routes: exactly the routes of the point routes' contract
//! (`relayed_routes`, which the point service serves), each served here by the relay and
//! documented with the contract's operation (its parameters, body, answers and schemas, the
//! same definition the point service's document shows) plus what the relay itself answers
//! (400, 413, 502, 504). So a client generated from this document alone types the balance,
//! offers and orders, and a route the contract adds is relayed and documented here with no
//! second list to keep.

use actix_web::{HttpRequest, web};
use utoipa::openapi::path::{HttpMethod, Operation};
use utoipa::openapi::schema::{AnyOf, Schema};
use utoipa::openapi::{Content, Ref, RefOr, Response};

use crate::config::{PAY_WAIT, RELAY_WAIT};
use crate::relay::{self, FORWARDED_HEADERS, RelayRefusal};
use crate::state::AppState;

/// The prefix both services serve the app's routes under.
pub const PREFIX: &str = relayed_routes::PREFIX;

/// One route per route of the contract, relative to [`PREFIX`], with the relay as its
/// handler.
pub fn routes() -> impl Iterator<Item = server::Route> {
    relayed_routes::Route::ALL.into_iter().map(relayed)
}

fn relayed(route: relayed_routes::Route) -> server::Route {
    let contract = route.contract();
    let pay = route.is_pay();
    let post = contract.method == HttpMethod::Post;
    let target = relay::Route::new(&contract.pattern, post, pay);
    let handler = move |state: web::Data<AppState>, req: HttpRequest, body: web::Bytes| {
        relay::relay(state, req, body, target)
    };
    server::Route::new(
        contract.method.clone(),
        contract.path.as_str(),
        operation(contract, pay),
        move || web::route().to(handler),
    )
    .with_schemas(contract.schemas.iter().cloned())
}

/// The contract's operation (its id and tags too: a client names the route as the point
/// service does) with the relay's own answers.
fn operation(contract: &relayed_routes::Contract, pay: bool) -> Operation {
    let mut operation = contract.operation.clone();
    let wait = if pay {
        format!("{} s (POINT_SERVICE_PAY_TIMEOUT_MS)", PAY_WAIT.as_secs())
    } else {
        format!("{} s (POINT_SERVICE_TIMEOUT_MS)", RELAY_WAIT.as_secs())
    };
    operation.summary = operation
        .summary
        .take()
        .map(|summary| format!("{summary} (relayed)"));
    let own = operation
        .description
        .take()
        .map(|text| format!("\n\nThe point service: {text}"))
        .unwrap_or_default();
    operation.description = Some(format!(
        "Relayed to the point service unchanged: the same method, request target (path and query, \
         byte for byte) and body, with the request headers {} (and `traceparent`/`tracestate` from \
         the relay's own span); the point service's status, Content-Type and body come back \
         unchanged, the body streamed. The answers below are the point service's own (its \
         document's, from the same definition), but for 502, 504, 413 and the order service's own \
         400s, which the order service makes itself. The relay waits {wait} for the point \
         service.{own}",
        FORWARDED_HEADERS.map(|name| format!("`{name}`")).join(", ")
    ));
    let answers = &mut operation.responses.responses;
    let point_400 = answers.remove("400").and_then(|answer| match answer {
        RefOr::T(answer) => Some(answer),
        RefOr::Ref(_) => None,
    });
    answers.insert("400".into(), RefOr::T(bad_request(point_400)));
    answers.insert(
        "413".into(),
        RefOr::T(envelope::openapi::answer(
            "`Payload Too Large` (envelope C, made by the order service): the request body is over \
             64 KiB; nothing is relayed",
            "ErrorC",
        )),
    );
    let unavailable = RelayRefusal::Unavailable("<error text>".to_owned());
    answers.insert(
        "502".into(),
        RefOr::T(envelope::openapi::answer(
            &format!(
                "`POINT_SERVICE_UNAVAILABLE` `{unavailable}` (the error and its causes on one \
                 line): the point service could not be reached (refused, reset, DNS); made by \
                 the order service"
            ),
            "ErrorB",
        )),
    );
    answers.insert(
        "504".into(),
        RefOr::T(envelope::openapi::answer(
            &format!(
                "`POINT_SERVICE_TIMEOUT` `{}`: no answer within {wait}; made by the order \
                 service. The outcome is unknown: reads, description and pay/session are safe to \
                 retry; after a create or pay/card 504, read the balance, history or order before \
                 trying again",
                RelayRefusal::TimedOut
            ),
            "ErrorB",
        )),
    );
    operation
}

/// The point service's own 400 (envelope B, or on the pay routes the payment service's body
/// it passed on), or the order service's refusals before anything is relayed: a target that
/// cannot go out byte for byte (B), the door's (C).
fn bad_request(point: Option<Response>) -> Response {
    let mut bodies = AnyOf::new();
    for body in point
        .iter()
        .flat_map(|answer| answer.content.values())
        .filter_map(|content| match content {
            RefOr::T(content) => content.schema.clone(),
            RefOr::Ref(_) => None,
        })
    {
        match body {
            RefOr::T(Schema::AnyOf(choices)) => bodies.items.extend(choices.items),
            body => bodies.items.push(body),
        }
    }
    for ours in ["ErrorB", "ErrorC"] {
        let ours: RefOr<Schema> = Ref::from_schema_name(ours).into();
        if !bodies.items.contains(&ours) {
            bodies.items.push(ours);
        }
    }
    let point = point
        .map(|answer| {
            format!(
                "the point service's own 400, relayed unchanged: {}; or, ",
                answer.description
            )
        })
        .unwrap_or_default();
    Response::builder()
        .description(format!(
            "{point}made by the order service before anything is relayed: `VALIDATION_ERROR` \
             `{}` (envelope B) for a request target that cannot go to the point service byte for \
             byte, or {} (envelope C)",
            RelayRefusal::Target,
            envelope::openapi::door_400_description()
        ))
        .content(
            "application/json",
            Content::new(Some(Schema::AnyOf(bodies))),
        )
        .build()
}
