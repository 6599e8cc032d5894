//! What the middleware does once the answer is ready: the span's outcome, the error's log
//! line, the metrics, the `X-Request-Id` header; and the body streamed inside the request's
//! scope.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use actix_web::body::{BodySize, MessageBody};
use actix_web::dev::ServiceResponse;
use actix_web::http::StatusCode;
use actix_web::http::header::HeaderValue;
use actix_web::web::Bytes;
use actix_web::{Error, ResponseError};
use opentelemetry::context::WithContext;
use tracing::Span;

use super::scope::Scope;
use super::{REQUEST_ID_HEADER, log_error};
use crate::metrics::{SeriesCache, count_and_time};
use crate::trace_context;

pin_project_lite::pin_project! {
    /// A request's future inside the middleware: its handler's, run in the request's scope
    /// and trace context, then the answer recorded. The middleware builds it field by field.
    pub struct Observed<F> {
        #[pin]
        pub(super) future: WithContext<F>,
        pub(super) scope: Scope,
        pub(super) started: Instant,
        pub(super) method: &'static str,
        pub(super) route: Option<String>,
        pub(super) request_id: Option<HeaderValue>,
    }
}

impl<F, B> Future for Observed<F>
where
    F: Future<Output = Result<ServiceResponse<B>, Error>>,
    B: MessageBody + 'static,
{
    type Output = Result<ServiceResponse<InSpan<B>>, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let _entered = this.scope.enter();
        let outcome = match this.future.poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(outcome) => outcome,
        };
        let (status, route, error) = match &outcome {
            Ok(res) => (
                res.status(),
                this.route.take(),
                res.response().error().map(|e| e.as_response_error()),
            ),
            Err(e) => (
                e.as_response_error().status_code(),
                None,
                Some(e.as_response_error()),
            ),
        };
        if trace_context::exporting()
            && let Scope::Span(span) = &*this.scope
        {
            record_outcome(span, status, error);
        }
        if let Some(error) = error {
            log_error(status, error);
        }
        record_metrics(
            this.method,
            route.unwrap_or_else(|| "unmatched".to_owned()),
            status,
            this.started.elapsed().as_secs_f64(),
        );
        let request_id = this.request_id.take();
        let scope = this.scope.clone();
        Poll::Ready(outcome.map(|mut res| {
            if let Some(id) = request_id {
                res.headers_mut().insert(REQUEST_ID_HEADER, id);
            }
            res.map_body(|_, body| InSpan { body, scope })
        }))
    }
}

/// The span's status fields, as tracing-actix-web's default root span records them.
fn record_outcome(span: &Span, status: StatusCode, error: Option<&dyn ResponseError>) {
    span.record("http.status_code", status.as_u16());
    if let Some(error) = error {
        span.record("exception.message", tracing::field::display(error));
        span.record("exception.details", tracing::field::debug(error));
    }
    let failed = error.is_some() && !status.is_client_error();
    span.record("otel.status_code", if failed { "ERROR" } else { "OK" });
}

/// Counts the request and records its latency by method, route pattern and status. Every
/// label is bounded whatever the caller sends: a method outside the standard nine is
/// `other` ([`method_label`]), paths that match no route share the route `unmatched`, and
/// the status is one the service itself answered.
fn record_metrics(method: &'static str, route: String, status: StatusCode, seconds: f64) {
    thread_local! {
        static SERIES: SeriesCache<(String, u16, &'static str)> = SeriesCache::default();
    }
    let register = |(route, status, method): &(String, u16, &'static str)| {
        let labels = [
            metrics::Label::new("method", *method),
            metrics::Label::new("route", route.clone()),
            metrics::Label::new("status", status.to_string()),
        ];
        (
            metrics::counter!(crate::metrics::HTTP_REQUESTS, labels.iter()),
            metrics::histogram!(crate::metrics::HTTP_REQUEST_DURATION, labels.iter()),
        )
    };
    count_and_time(&SERIES, (route, status.as_u16(), method), register, seconds);
}

pin_project_lite::pin_project! {
    /// An answer's body, streamed inside its request's scope (so a streaming error's log line
    /// carries the request id).
    pub struct InSpan<B> {
        #[pin]
        body: B,
        scope: Scope,
    }
}

impl<B: MessageBody> MessageBody for InSpan<B> {
    type Error = B::Error;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let this = self.project();
        let _entered = this.scope.enter();
        this.body.poll_next(cx)
    }
}
