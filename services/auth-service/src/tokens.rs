//! Primary tokens (HS256 JWTs, algorithm pinned, no expiry), legacy tokens (opaque random
//! strings kept only as SHA-256) and the keyed hash of login codes.

use std::collections::HashSet;

use hmac::{Hmac, KeyInit, Mac};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

envelope::refusals! {
    /// Why exchange-token refuses a body, besides JSON it cannot read.
    pub enum ExchangeRefusal in A {
        /// `token` missing, not text, or blank.
        TokenMissing => 400, "token is required";
        /// `target_platform` neither `primary` nor `legacy`.
        UnknownPlatform => 400, "target_platform must be primary or legacy";
    }
}

/// The `typ` claim of a primary token.
const PRIMARY: &str = "primary";

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    typ: String,
    iat: i64,
}

/// Keys derived from `AUTH_JWT_SECRET`.
#[derive(Clone)]
pub struct TokenKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    secret: Vec<u8>,
}

impl TokenKeys {
    pub fn new(secret: &[u8]) -> Self {
        // Only HS256 is accepted: a token naming any other algorithm, or `none`, fails.
        let mut validation = Validation::new(Algorithm::HS256);
        validation.validate_exp = false;
        validation.required_spec_claims = HashSet::from(["sub".to_owned()]);
        Self {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            validation,
            secret: secret.to_vec(),
        }
    }

    /// A primary token for `client_id`: `{"sub": "<id>", "typ": "primary", "iat": …}`.
    pub fn issue_primary(&self, client_id: i64) -> Result<String, jsonwebtoken::errors::Error> {
        let claims = Claims {
            sub: client_id.to_string(),
            typ: PRIMARY.to_owned(),
            iat: chrono::Utc::now().timestamp(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
    }

    /// The client id of a valid primary token, or `None`.
    pub fn verify_primary(&self, token: &str) -> Option<i64> {
        let data = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation).ok()?;
        if data.claims.typ != PRIMARY {
            return None;
        }
        data.claims
            .sub
            .parse::<domain::ClientId>()
            .ok()
            .map(domain::ClientId::get)
    }

    /// The stored form of a login code: HMAC-SHA256 keyed with the server secret, so that
    /// the 10 000 possible codes cannot be tried against a leaked table.
    pub fn code_hash(&self, client_id: i64, code: &str) -> Vec<u8> {
        self.code_mac(client_id, code)
            .finalize()
            .into_bytes()
            .to_vec()
    }

    /// Compares a code with a stored hash in constant time.
    pub fn code_matches(&self, client_id: i64, code: &str, stored: &[u8]) -> bool {
        self.code_mac(client_id, code).verify_slice(stored).is_ok()
    }

    fn code_mac(&self, client_id: i64, code: &str) -> Hmac<Sha256> {
        // HMAC takes keys of any length, so this cannot fail.
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.secret)
            .unwrap_or_else(|_| unreachable!());
        mac.update(format!("otp:{client_id}:{code}").as_bytes());
        mac
    }
}

/// A new legacy token: 32 random bytes from the OS-seeded CSPRNG, as 64 hex characters.
pub fn new_legacy_token() -> String {
    let mut bytes = [0_u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// The stored form of a legacy token.
pub fn legacy_hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// The token of an `Authorization: Bearer <token>` header.
pub fn bearer(header: Option<&str>) -> Option<&str> {
    header?
        .strip_prefix("Bearer ")
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_primary_token_round_trips_and_other_secrets_fail() {
        let keys = TokenKeys::new(b"a-secret-of-at-least-thirty-two-bytes!!");
        let token = keys.issue_primary(1001).unwrap();
        assert_eq!(keys.verify_primary(&token), Some(1001));
        let other = TokenKeys::new(b"another-secret-of-at-least-thirty-two-b");
        assert_eq!(other.verify_primary(&token), None);
    }

    #[test]
    fn legacy_tokens_are_random_hex_and_hash_to_32_bytes() {
        let (a, b) = (new_legacy_token(), new_legacy_token());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert_eq!(legacy_hash(&a).len(), 32);
        assert_eq!(legacy_hash(&a), legacy_hash(&a));
    }

    #[test]
    fn code_hashes_depend_on_client_and_code() {
        let keys = TokenKeys::new(b"k");
        let stored = keys.code_hash(1, "1234");
        assert!(keys.code_matches(1, "1234", &stored));
        assert!(!keys.code_matches(1, "1235", &stored));
        assert!(!keys.code_matches(2, "1234", &stored));
    }

    #[test]
    fn bearer_needs_the_prefix() {
        assert_eq!(bearer(Some("Bearer abc")), Some("abc"));
        assert_eq!(bearer(Some("bearer abc")), None);
        assert_eq!(bearer(Some("Bearer ")), None);
        assert_eq!(bearer(None), None);
    }
}
