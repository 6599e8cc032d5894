//! The relayed point routes: exactly the point service's own /api/v2/client routes
//! (`point_service::routes::routes()`), each served here by the relay and documented with
//! the point service's operation (its parameters, body, answers and schemas, from the one
//! definition on its handler) plus what the relay itself answers (400, 413, 502, 504). So a
//! client generated from this document alone types the balance, offers and orders, and a
//! route the point service adds is relayed and documented here with no second list to keep.
//!
//! The order service links the point service's library for this (its route list and answer
//! types, never its handlers' work): the answer types carry their diesel mapping, so they
//! cannot move into a crate of their own without the point service's schema.

use actix_web::{HttpRequest, web};
use utoipa::openapi::path::{HttpMethod, Operation};
use utoipa::openapi::schema::{AnyOf, Schema};
use utoipa::openapi::{Content, Ref, RefOr, Response};

use crate::relay::{self, FORWARDED_HEADERS, is_pay_route};
use crate::state::AppState;

/// The tag of the relayed routes in this document.
pub const TAG: &str = "relayed point routes";

/// The prefix both services serve the app's routes under.
pub const PREFIX: &str = point_service::routes::CLIENT;

/// One route per point-service route under [`PREFIX`], relative to it, with the relay as
/// its handler.
pub fn routes() -> impl Iterator<Item = server::Route> {
    point_service::routes::routes()
        .iter()
        .filter(|route| route.pattern().starts_with(&format!("{PREFIX}/")))
        .map(relayed)
}

fn relayed(point: &'static server::Route) -> server::Route {
    let pattern: &'static str = point.pattern();
    let pay = is_pay_route(pattern);
    let post = *point.method() == HttpMethod::Post;
    let target = if post {
        relay::Route::post(pattern, pay)
    } else {
        relay::Route::get(pattern, pay)
    };
    let handler = move |state: web::Data<AppState>, req: HttpRequest, body: web::Bytes| {
        relay::relay(state, req, body, target)
    };
    server::Route::new(
        point.method().clone(),
        &pattern[PREFIX.len()..],
        operation(point, post, pay),
        move || web::route().to(handler),
    )
    .with_schemas(point.schemas().iter().cloned())
}

/// The point service's operation with the relay's own answers.
fn operation(point: &server::Route, post: bool, pay: bool) -> Operation {
    let mut operation = point.operation().clone();
    let wait = if pay {
        "20 s (POINT_SERVICE_PAY_TIMEOUT_MS)"
    } else {
        "10 s (POINT_SERVICE_TIMEOUT_MS)"
    };
    let path = point.documented_path();
    operation.tags = Some(vec![TAG.to_owned()]);
    operation.operation_id = Some(format!(
        "relay_{}{}",
        if post { "post" } else { "get" },
        path.trim_start_matches(PREFIX)
            .replace(['/', '-'], "_")
            .replace(['{', '}'], "")
    ));
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
        RefOr::T(answer) => Some(answer.description),
        RefOr::Ref(_) => None,
    });
    answers.insert("400".into(), RefOr::T(bad_request(point_400.as_deref())));
    answers.insert(
        "413".into(),
        RefOr::T(envelope::openapi::answer(
            "`Payload Too Large` (envelope C, made by the order service): the request body is over \
             64 KiB; nothing is relayed",
            "ErrorC",
        )),
    );
    answers.insert(
        "502".into(),
        RefOr::T(envelope::openapi::answer(
            "`POINT_SERVICE_UNAVAILABLE` `Point service unavailable: <error text>` (the error and \
             its causes on one line): the point service could not be reached (refused, reset, \
             DNS); made by the order service",
            "ErrorB",
        )),
    );
    answers.insert(
        "504".into(),
        RefOr::T(envelope::openapi::answer(
            &format!(
                "`POINT_SERVICE_TIMEOUT` `Point service did not respond in time; the request outcome \
                 is unknown`: no answer within {wait}; made by the order service. The outcome is \
                 unknown: reads, description and pay/session are safe to retry; after a create or \
                 pay/card 504, read the balance, history or order before trying again"
            ),
            "ErrorB",
        )),
    );
    operation
}

/// The point service's own 400 (envelope B), or the order service's refusals before
/// anything is relayed: a target that cannot go out byte for byte (B), the door's (C).
fn bad_request(point: Option<&str>) -> Response {
    let point = point
        .map(|text| format!("the point service's own 400, relayed unchanged: {text}; or, "))
        .unwrap_or_default();
    Response::builder()
        .description(format!(
            "{point}made by the order service before anything is relayed: `VALIDATION_ERROR` \
             `Request target cannot be relayed unchanged` (envelope B) for a request target that \
             cannot go to the point service byte for byte, or {} (envelope C)",
            envelope::openapi::door_400_description()
        ))
        .content(
            "application/json",
            Content::new(Some(Schema::AnyOf(
                AnyOf::builder()
                    .item(Ref::from_schema_name("ErrorB"))
                    .item(Ref::from_schema_name("ErrorC"))
                    .build(),
            ))),
        )
        .build()
}
