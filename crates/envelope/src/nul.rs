//! NUL characters are refused at the door. PostgreSQL text cannot hold one, so a `%00` in a
//! query or a `\u0000` in a JSON string would otherwise travel to the database and come back
//! as a 500 with the driver's text; here it is a 400 in the route's envelope before any
//! handler runs, for every route of every service alike.

use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{Payload, ServiceRequest};
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::web::BytesMut;
use futures_util::StreamExt;

use crate::Envelope;
use crate::exposure::Answer;
use crate::handlers::JSON_LIMIT_BYTES;

pub const MESSAGE: &str = "Invalid input: text must not contain NUL characters";

/// The middleware: `App::new().wrap(from_fn(nul::middleware(envelope)))`. Bodies are read
/// whole (they are capped at [`JSON_LIMIT_BYTES`] anyway), checked, and handed on unchanged.
pub fn middleware<B: MessageBody + 'static>(
    envelope: Envelope,
) -> impl Fn(ServiceRequest, Next<B>) -> Answer<B> + Clone {
    move |mut req, next| {
        Box::pin(async move {
            if has_encoded_nul(req.path()) || has_encoded_nul(req.query_string()) {
                return Err(envelope.error(StatusCode::BAD_REQUEST, MESSAGE));
            }
            let mut payload = req.take_payload();
            let mut body = BytesMut::new();
            while let Some(chunk) = payload.next().await {
                let chunk = chunk?;
                if body.len() + chunk.len() > JSON_LIMIT_BYTES {
                    return Err(envelope.error(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large"));
                }
                body.extend_from_slice(&chunk);
            }
            if has_nul(&body) {
                return Err(envelope.error(StatusCode::BAD_REQUEST, MESSAGE));
            }
            req.set_payload(Payload::from(body.freeze()));
            next.call(req).await
        })
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
