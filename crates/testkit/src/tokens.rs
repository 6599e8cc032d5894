//! Tokens made by hand: JWTs with any header and claims, signed as asked or not at all (the
//! forgeries of the token tests, and genuine tokens made the same way so that each refusal
//! is for the reason it tests), and the payment webhook's signature.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::{Sha256, Sha512};

/// How [`jwt`] signs.
#[derive(Clone, Copy, Debug)]
pub enum Signature<'a> {
    /// An empty signature (`alg: none` tokens).
    None,
    /// HMAC-SHA256 under the key.
    Hs256(&'a str),
    /// HMAC-SHA512 under the key.
    Hs512(&'a str),
}

/// The header of an HS256 JWT.
pub fn hs256() -> Value {
    json!({"alg": "HS256", "typ": "JWT"})
}

/// A JWT with any header and claims, signed as asked: `header.claims.signature`, each
/// part URL-safe base64 without padding.
pub fn jwt(header: &Value, claims: &Value, signature: Signature) -> String {
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let mac = match signature {
        Signature::None => Vec::new(),
        Signature::Hs256(key) => {
            let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key.as_bytes()).unwrap();
            mac.update(input.as_bytes());
            mac.finalize().into_bytes().to_vec()
        }
        Signature::Hs512(key) => {
            let mut mac = <Hmac<Sha512> as KeyInit>::new_from_slice(key.as_bytes()).unwrap();
            mac.update(input.as_bytes());
            mac.finalize().into_bytes().to_vec()
        }
    };
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(mac))
}

/// The payment webhook's `X-Signature` for `body` sent at unix time `t` under `secret`:
/// `t=<t>,v1=<hex HMAC-SHA256 of "<t>.<body>">` (`docs/design.md`, "Payment service").
pub fn webhook_signature(secret: &str, t: i64, body: &str) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.{body}").as_bytes());
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

/// Now, in unix seconds (a fresh webhook timestamp).
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}
