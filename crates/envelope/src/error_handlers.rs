//! Shared handlers so that no answer is ever actix's plain text: bad JSON, bad path or query
//! values, unknown routes, wrong methods and any other error actix produces itself.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::ServiceResponse;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::{ErrorHandlerResponse, ErrorHandlers};
use actix_web::{HttpRequest, HttpResponse, web};

use crate::Envelope;
use crate::body_limits::JSON_LIMIT_BYTES;

/// The same limit for bodies read as bytes (the relay, the routes that parse by hand).
pub fn payload_config() -> web::PayloadConfig {
    web::PayloadConfig::new(JSON_LIMIT_BYTES)
}

pub fn json_config(envelope: Envelope) -> web::JsonConfig {
    web::JsonConfig::default()
        .limit(JSON_LIMIT_BYTES)
        .error_handler(move |err, _req: &HttpRequest| {
            let status = match &err {
                actix_web::error::JsonPayloadError::OverflowKnownLength { .. }
                | actix_web::error::JsonPayloadError::Overflow { .. } => {
                    StatusCode::PAYLOAD_TOO_LARGE
                }
                actix_web::error::JsonPayloadError::ContentType => {
                    StatusCode::UNSUPPORTED_MEDIA_TYPE
                }
                _ => StatusCode::BAD_REQUEST,
            };
            envelope.error(status, format!("Invalid JSON body: {err}"))
        })
}

pub fn path_config(envelope: Envelope) -> web::PathConfig {
    web::PathConfig::default().error_handler(move |err, _req| {
        envelope.error(StatusCode::BAD_REQUEST, format!("Invalid path: {err}"))
    })
}

pub fn query_config(envelope: Envelope) -> web::QueryConfig {
    web::QueryConfig::default().error_handler(move |err, _req| {
        envelope.error(StatusCode::BAD_REQUEST, format!("Invalid query: {err}"))
    })
}

/// The app's default service: an unknown path is a 404 in the app's envelope.
pub async fn not_found(envelope: web::Data<Envelope>, req: HttpRequest) -> HttpResponse {
    envelope
        .error(
            StatusCode::NOT_FOUND,
            format!("Cannot {} {}", req.method(), req.path()),
        )
        .error_response()
}

/// Marks an answer that another service made and this one passes on as it came (the order
/// service's relay): put in the response's extensions, it keeps [`plain_errors_to_json`]
/// away, whatever the answer's status and content type.
#[derive(Debug, Clone, Copy)]
pub struct Verbatim;

/// Turns every error answer of the app's own that is not JSON (a 405 from a resource, a
/// payload error raised inside actix) into the app's envelope, with the status's reason
/// phrase as the message. Answers marked [`Verbatim`] pass untouched.
pub fn plain_errors_to_json<B: MessageBody + 'static>(envelope: Envelope) -> ErrorHandlers<B> {
    ErrorHandlers::new().default_handler(move |res: ServiceResponse<B>| {
        if res.response().extensions().contains::<Verbatim>() {
            return Ok(ErrorHandlerResponse::Response(res.map_into_left_body()));
        }
        let is_json = res
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if is_json {
            return Ok(ErrorHandlerResponse::Response(res.map_into_left_body()));
        }
        let status = res.status();
        let allow: Option<HeaderValue> = res.headers().get(header::ALLOW).cloned();
        let message = status.canonical_reason().unwrap_or("Error");
        let (req, _) = res.into_parts();
        let mut response: HttpResponse<BoxBody> = envelope.error(status, message).error_response();
        if let Some(allow) = allow {
            response.headers_mut().insert(header::ALLOW, allow);
        }
        Ok(ErrorHandlerResponse::Response(
            ServiceResponse::new(req, response).map_into_right_body(),
        ))
    })
}
