//! The request's limits at the door, first of them NUL characters. PostgreSQL text cannot
//! hold one, so a `%00` in a query or a `\u0000` in a JSON string would otherwise travel to
//! the database and come back as a 500 with the driver's text; here it is a 400 in the
//! route's envelope before any handler runs, for every route of every service alike.
//!
//! The same middleware is the one place where every request body is read, once, before any
//! handler: so it also holds the body's other limits, each answered in the route's envelope
//! before any handler or database work:
//!
//! - over [`JSON_LIMIT_BYTES`]: 413 `Payload Too Large`;
//! - not received whole within the read deadline (a client that declared a body and stopped
//!   sending it): 408 [`BODY_TIMEOUT_MESSAGE`], and the connection is closed;
//! - a NUL: 400 [`NUL_MESSAGE`];
//! - JSON nested deeper than [`depth::MAX_DEPTH`]: 400 [`depth::MESSAGE`]. The scan is here
//!   rather than in each route's parser because every body passes here exactly once, the
//!   relay's (which is never parsed) included, and it needs no parse: it counts brackets
//!   outside strings on the bytes already in memory.
//!
//! A compressed body (`Content-Encoding: gzip` or `deflate`) is decoded first
//! ([`crate::encoding`]) and every rule above applies to what it decodes to: the size
//! limit to both the compressed and the decoded body (a gzip bomb stops at the limit, 413),
//! a body that does not decode is a 400 and an unknown coding a 415. The handler gets the
//! decoded body with `Content-Encoding` removed, so compressing a body never changes its
//! answer.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::HttpMessage;
use actix_web::body::{BodySize, BoxBody, EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{ConnectionType, StatusCode};
use actix_web::middleware::Next;
use actix_web::web::{Bytes, BytesMut};
use futures_util::StreamExt;

use crate::Envelope;
use crate::depth;
use crate::encoding::{self, Coding, DecodeError};
use crate::exposure::Answer;

/// The largest request body a route accepts, JSON or raw: a bigger one is 413 in the route's
/// envelope before any work is done.
pub const JSON_LIMIT_BYTES: usize = 64 * 1024;

/// The message of the 400 for a NUL character in the query or the body.
pub const NUL_MESSAGE: &str = "Invalid input: text must not contain NUL characters";

/// The message of the 408 for a body that did not arrive within the read deadline.
pub const BODY_TIMEOUT_MESSAGE: &str = "Request Timeout: the request body did not arrive in time";

/// The middleware: `App::new().wrap(from_fn(body_limits::middleware(envelope, body_timeout)))`.
/// Bodies are read whole (they are capped at [`JSON_LIMIT_BYTES`] anyway) within
/// `body_timeout`, checked, and handed on unchanged.
pub fn middleware<B: MessageBody + 'static>(
    envelope: Envelope,
    body_timeout: Duration,
) -> impl Fn(ServiceRequest, Next<B>) -> Answer<EitherBody<B>> + Clone {
    move |mut req, next| {
        Box::pin(async move {
            if has_encoded_nul(req.path()) || has_encoded_nul(req.query_string()) {
                return Err(envelope.error(StatusCode::BAD_REQUEST, NUL_MESSAGE));
            }
            let coding = Coding::parse(
                req.headers()
                    .get(header::CONTENT_ENCODING)
                    .map(|v| v.as_bytes()),
            )
            .map_err(|e| refusal(envelope, &e))?;
            let mut payload = req.take_payload();
            if matches!(payload, Payload::None) {
                // No body at all (most GETs): nothing to read, check or wait for.
                return next
                    .call(req)
                    .await
                    .map(ServiceResponse::map_into_left_body);
            }
            let read = async {
                let mut body = BytesMut::new();
                while let Some(chunk) = payload.next().await {
                    let chunk = chunk?;
                    if body.len() + chunk.len() > JSON_LIMIT_BYTES {
                        return Err(
                            envelope.error(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large")
                        );
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(body)
            };
            // Nothing has run yet when the deadline passes, so dropping the read is safe.
            let Ok(body) = tokio::time::timeout(body_timeout, read).await else {
                let answer = envelope
                    .error(StatusCode::REQUEST_TIMEOUT, BODY_TIMEOUT_MESSAGE)
                    .error_response()
                    .map_body(|head, body| {
                        head.set_connection_type(ConnectionType::Close);
                        BoxBody::new(HoldingPayload {
                            body,
                            _payload: Box::new(payload),
                        })
                    });
                return Ok(req.into_response(answer).map_into_right_body());
            };
            let body = body?;
            let body = match encoding::decode(coding, &body, JSON_LIMIT_BYTES) {
                Ok(None) => body,
                Ok(Some(decoded)) => BytesMut::from(&decoded[..]),
                Err(e) => return Err(refusal(envelope, &e)),
            };
            if coding != Coding::Identity {
                // The handler reads the decoded body as it is: nothing may decode it again.
                req.headers_mut().remove(header::CONTENT_ENCODING);
                req.headers_mut()
                    .insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
            }
            if has_nul(&body) {
                return Err(envelope.error(StatusCode::BAD_REQUEST, NUL_MESSAGE));
            }
            if depth::deeper_than(&body, depth::MAX_DEPTH) {
                return Err(envelope.error(StatusCode::BAD_REQUEST, depth::MESSAGE));
            }
            req.set_payload(Payload::from(body.freeze()));
            next.call(req)
                .await
                .map(ServiceResponse::map_into_left_body)
        })
    }
}

/// The answer to a body that cannot be decoded, in the route's envelope.
fn refusal(envelope: Envelope, e: &DecodeError) -> actix_web::Error {
    let status = match e {
        DecodeError::Unsupported(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        DecodeError::Corrupt(_) => StatusCode::BAD_REQUEST,
        DecodeError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
    };
    envelope.error(status, e.to_string())
}

/// The 408's body, holding the unfinished request payload until the answer is written.
///
/// actix closes a connection after an answer only if the request's payload is still held
/// then; a payload already dropped is "drained" first when it is chunked, that is, the
/// connection waits for the rest of the body with no deadline at all, which is exactly what
/// a client that stalled its body never sends. Held to the end, the payload makes actix
/// close the connection (after `HTTP_DISCONNECT_TIMEOUT_MS` of lingering) instead.
struct HoldingPayload {
    body: BoxBody,
    _payload: Box<Payload>,
}

impl MessageBody for HoldingPayload {
    type Error = Box<dyn std::error::Error>;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_next(cx)
    }
}

/// `%00` in a raw (still percent-encoded) path or query.
fn has_encoded_nul(raw: &str) -> bool {
    raw.contains("%00")
}

/// A raw NUL byte, or a JSON `\u0000` escape (one that is not itself an escaped backslash
/// followed by the text `u0000`).
fn has_nul(body: &[u8]) -> bool {
    if body.contains(&0) {
        return true;
    }
    let pattern = b"\\u0000";
    body.windows(pattern.len())
        .enumerate()
        .filter(|(_, window)| *window == pattern)
        .any(|(at, _)| {
            let backslashes = body[..=at]
                .iter()
                .rev()
                .take_while(|b| **b == b'\\')
                .count();
            backslashes % 2 == 1
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_is_found_raw_and_escaped_but_not_in_an_escaped_backslash() {
        assert!(has_nul(b"{\"a\":\"x\0\"}"));
        assert!(has_nul(br#"{"a":"x\u0000"}"#));
        assert!(
            has_nul(br#"{"a":"\\\u0000"}"#),
            "an escaped backslash, then a NUL"
        );
        assert!(
            !has_nul(br#"{"a":"\\u0000"}"#),
            "the text \\u0000 is not a NUL"
        );
        assert!(!has_nul(br#"{"a":"\u0001 u0000"}"#));
        assert!(has_encoded_nul("contact_phone=%2B9665%00"));
        assert!(!has_encoded_nul("contact_phone=%2B96650"));
    }
}
