//! The middleware every request passes first: its root span, its request id, its metrics.
//!
//! One middleware rather than a stack of them (the tracing-actix-web logger, a request-id
//! header layer, a metrics layer) because the shared request path is paid by every request:
//! each layer boxed its future and looked up the same facts again (the route pattern, the
//! request id). What a request gets, whatever its answer:
//!
//! - its fields: method, route pattern, path (never the query: it carries phone numbers and
//!   login codes), request id, trace id and the `X-Request-Id` a caller sent; every log line
//!   written while serving it lists them as the fields of a span `HTTP request`. With JSON
//!   logs and no exporter (production) they are kept aside and written only into a line that
//!   is written ([`crate::request_fields`]); otherwise they are a tracing span's;
//! - an `X-Request-Id` answer header with that request id;
//! - `http_requests_total` and `http_request_duration_seconds` by method, route and status;
//! - a log line for an answer that carries an error (warn for 4xx, error for 5xx), as the
//!   tracing-actix-web logger wrote it;
//! - the W3C trace context ([`crate::trace_context`]): with an exporter, the span continues
//!   the caller's `traceparent` in OpenTelemetry and gets its status and error fields;
//!   without one, the caller's context (or a new one) is current while the request runs,
//!   for the calls it makes.
//!
//! Here the middleware and the request's span; in `labels` the request's bounded facts, in
//! `scope` where its fields live while it runs, in `answered` what is done with its answer.

mod answered;
mod labels;
mod scope;

use std::future::{Ready, ready};
use std::rc::Rc;
use std::time::Instant;

use actix_web::Error;
use actix_web::ResponseError;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceRequest, ServiceResponse, Transform};
use actix_web::http::StatusCode;
use actix_web::http::header::{HeaderName, HeaderValue};
use opentelemetry::context::FutureExt as _;
use opentelemetry::trace::TraceContextExt as _;
use tracing::Span;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::request_fields::{self, RequestFields};
use crate::trace_context;
use labels::{caller_request_id, http_flavor};
use scope::Scope;

pub use answered::{InSpan, Observed};
pub use labels::method_label;

pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// The name of every request's root span (the JSON log layer lists only these spans).
pub const REQUEST_SPAN: &str = "HTTP request";

/// The target of the request spans made here (a span's target is its module's path): the
/// spans and the error's log line are written in this file, not its submodules, so that the
/// log layer and `RUST_LOG` see them as `telemetry::http`.
pub(crate) const REQUEST_SPAN_TARGET: &str = module_path!();

/// The middleware; wrap it outermost (`App::wrap` last), so that it sees every answer.
pub fn observe() -> Observe {
    Observe
}

#[derive(Clone, Copy)]
pub struct Observe;

/// Whatever service the middleware can wrap (see its `Service` impl for the bounds).
impl<S, B> Transform<S, ServiceRequest> for Observe
where
    ObserveMiddleware<S>:
        Service<ServiceRequest, Response = ServiceResponse<InSpan<B>>, Error = Error>,
{
    type Response = ServiceResponse<InSpan<B>>;
    type Error = Error;
    type Transform = ObserveMiddleware<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(ObserveMiddleware { service }))
    }
}

pub struct ObserveMiddleware<S> {
    service: S,
}

impl<S, B> Service<ServiceRequest> for ObserveMiddleware<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error>,
    S::Future: 'static,
    B: MessageBody + 'static,
{
    type Response = ServiceResponse<InSpan<B>>;
    type Error = Error;
    type Future = Observed<S::Future>;

    actix_web::dev::forward_ready!(service);

    fn call(&self, req: ServiceRequest) -> Self::Future {
        let started = Instant::now();
        let method = method_label(req.method());
        // The route pattern (`/api/v2/client/point-offers/{id}`) for the span and the
        // metrics: actix finds it by walking the route table (regular expressions for the
        // routes with parameters), so once per request, carried to the answer.
        let route = req.match_pattern();
        let request_id = uuid::Uuid::new_v4();
        let mut id_text = uuid::Uuid::encode_buffer();
        let id_text = request_id.hyphenated().encode_lower(&mut id_text);
        // The request's trace context is the current OpenTelemetry context while its future
        // runs: with an exporter, its root span's (as tracing-opentelemetry makes it when the
        // span is entered: attaching another would cut its children off the trace); without,
        // the caller's or a new one, for the calls it makes (`trace_context::for_call`).
        let (scope, context) = if trace_context::exporting() {
            let span = exported_span(&req, method, route.as_deref(), id_text);
            let context = span.context();
            (Scope::Span(span), context)
        } else {
            let context = trace_context::for_request(req.headers());
            let scope = if request_fields::used() {
                Scope::Fields(Rc::new(RequestFields {
                    method,
                    route: route.clone(),
                    target: req.path().to_owned(),
                    request_id,
                    trace_id: context.span().span_context().trace_id(),
                    caller_request_id: caller_request_id(&req),
                }))
            } else {
                Scope::Span(logged_span(
                    &req,
                    method,
                    route.as_deref(),
                    id_text,
                    &context,
                ))
            };
            (scope, context)
        };
        let header = HeaderValue::from_str(id_text).ok();
        let future = {
            let _entered = scope.enter();
            self.service.call(req)
        };
        let future = future.with_context(context);
        Observed {
            future,
            scope,
            started,
            method,
            route,
            request_id: header,
        }
    }
}

/// The root span when nothing is exported but logs are for a terminal: only what a log line
/// needs, all known at once, so the log layer formats it once and never again.
fn logged_span(
    req: &ServiceRequest,
    method: &'static str,
    route: Option<&str>,
    request_id: &str,
    context: &opentelemetry::Context,
) -> Span {
    let caller_request_id = caller_request_id(req);
    tracing::info_span!(
        REQUEST_SPAN,
        http.method = method,
        http.route = route.unwrap_or("default"),
        http.target = req.path(),
        request_id = request_id,
        trace_id = trace_context::trace_id(context).as_deref(),
        caller_request_id = caller_request_id.as_deref(),
    )
}

/// The root span when spans go to OpenTelemetry: the fields of tracing-actix-web's default
/// span (OpenTelemetry's semantic conventions), with `http.target` without the query string,
/// continuing the caller's trace.
fn exported_span(
    req: &ServiceRequest,
    method: &'static str,
    route: Option<&str>,
    request_id: &str,
) -> Span {
    let route = route.unwrap_or("default");
    let connection = req.connection_info();
    let span = tracing::info_span!(
        REQUEST_SPAN,
        http.method = method,
        http.route = route,
        http.flavor = http_flavor(req.version()),
        http.scheme = connection.scheme(),
        http.host = connection.host(),
        http.client_ip = connection.realip_remote_addr().unwrap_or(""),
        http.user_agent = req
            .headers()
            .get("user-agent")
            .and_then(|h| h.to_str().ok())
            .unwrap_or(""),
        http.target = req.path(),
        http.status_code = Empty,
        otel.name = format!("{method} {route}"),
        otel.kind = "server",
        otel.status_code = Empty,
        trace_id = Empty,
        request_id = request_id,
        exception.message = Empty,
        exception.details = Empty,
        caller_request_id = caller_request_id(req).as_deref(),
    );
    drop(connection);
    if let Some(parent) = trace_context::from_caller(req.headers()) {
        // A span that cannot take a parent (disabled by the filter) keeps its own trace.
        let _ = span.set_parent(parent);
    }
    // Starts the OpenTelemetry span, whose context the request then runs in.
    if let Some(id) = trace_context::trace_id(&span.context()) {
        span.record("trace_id", id);
    }
    span
}

/// The line tracing-actix-web's logger wrote for an answer that carries an error.
fn log_error(status: StatusCode, error: &dyn ResponseError) {
    const PREFIX: &str = "Error encountered while processing the incoming HTTP request";
    if status.is_client_error() {
        tracing::warn!("{PREFIX}: {error:?}");
    } else {
        tracing::error!("{PREFIX}: {error:?}");
    }
}
