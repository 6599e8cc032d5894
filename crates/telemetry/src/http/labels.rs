//! The facts of a request that its span and metrics name, each bounded whatever the caller
//! sends.

use actix_web::dev::ServiceRequest;

use super::REQUEST_ID_HEADER;

/// The request method as a bounded label: one of the nine standard methods, else `other`.
/// actix-web accepts any method token (`QWERTY123 /x HTTP/1.1`), so the method as sent would
/// let any caller grow the metric series (and the span names a trace backend groups by)
/// without limit. A `&'static str`, so labelling a request allocates nothing.
pub fn method_label(method: &actix_web::http::Method) -> &'static str {
    use actix_web::http::Method;
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "other",
    }
}

/// The HTTP version as tracing-actix-web's span gave it (`1.1`, not `HTTP/1.1`).
pub(super) fn http_flavor(version: actix_web::http::Version) -> &'static str {
    use actix_web::http::Version;
    match version {
        Version::HTTP_09 => "0.9",
        Version::HTTP_10 => "1.0",
        Version::HTTP_2 => "2.0",
        Version::HTTP_3 => "3.0",
        _ => "1.1",
    }
}

/// The `X-Request-Id` a caller sent (the relay sends its own), at most 128 characters.
pub(super) fn caller_request_id(req: &ServiceRequest) -> Option<String> {
    let sent = req.headers().get(&REQUEST_ID_HEADER)?.to_str().ok()?;
    Some(sent.chars().take(128).collect())
}
