//! The credential one of our services sends with a call to another (`Authorization: Bearer`):
//! a JWT signed with the caller's own Ed25519 key, naming the caller (`iss`) and the callee
//! (`aud`), that expires within minutes. A credential that changes something (credits, the
//! back office) is made for one request: it also names its method, path and query and the
//! digest of its body, and a back-office one the operator the operator service vouches for.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix_web::http::header::{AUTHORIZATION, HeaderMap};
use jsonwebtoken::{Algorithm, Header, Validation};
use rand::RngCore;
use serde::{Deserialize, Serialize};

use crate::keys::{OwnKey, Trust, kid};
use crate::service::{InternalRoute, Service};

/// How long a call's credential is good for.
pub const LIFETIME: Duration = Duration::from_secs(300);
/// How long a caller sends one credential before it signs another (well inside `LIFETIME`,
/// so that a call in flight never carries one about to expire).
pub const REUSE: Duration = Duration::from_secs(60);
/// How long an operator's vouched request is good for: one call, its retries excluded.
pub const VOUCHED_LIFETIME: Duration = Duration::from_secs(60);
/// The longest credential read: ours are a few hundred bytes.
const MAX_LENGTH: usize = 4096;
/// How far apart two hosts' clocks may be.
pub const LEEWAY: Duration = Duration::from_secs(30);

/// The operator the operator service authenticated for this request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vouched {
    /// The operator token's `sub`.
    pub id: String,
    /// The operator token's role, as it names it.
    pub role: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    iss: String,
    aud: String,
    iat: u64,
    exp: u64,
    jti: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    operator: Option<Vouched>,
    /// `<METHOD> <path and query>` of the one request it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    request: Option<String>,
    /// The SHA-256 of that request's body, base64url ([`digest`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    body: Option<String>,
}

/// The digest a credential names a request's body by: SHA-256, base64url.
pub fn digest(body: &[u8]) -> String {
    use base64::Engine;
    use sha2::Digest;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(body))
}

/// Signs this service's credentials.
pub struct Signer {
    me: Service,
    key: OwnKey,
    /// The credential last signed for each callee, and when.
    reused: Mutex<HashMap<Service, (String, u64)>>,
}

impl Signer {
    pub fn new(me: Service, key: OwnKey) -> Signer {
        Signer {
            me,
            key,
            reused: Mutex::new(HashMap::new()),
        }
    }

    /// This service's name.
    pub fn service(&self) -> Service {
        self.me
    }

    /// The `Authorization` value of a call to `callee`: one credential signed every `REUSE`.
    pub fn authorization(&self, callee: Service) -> String {
        let now = now();
        let mut reused = self
            .reused
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Reused only while it was signed in the last `REUSE`: a clock stepped back signs
        // anew rather than send one that may be past its time.
        if let Some((credential, at)) = reused.get(&callee)
            && *at <= now
            && now - *at < REUSE.as_secs()
        {
            return bearer(credential);
        }
        let credential = self.sign(callee, LIFETIME, None, None, now);
        reused.insert(callee, (credential.clone(), now));
        bearer(&credential)
    }

    /// The `Authorization` value of one request, `method` to `path_and_query` with `body`
    /// (empty for none), made for `operator` (a back-office one; none for a read that names
    /// nobody, or a service's own call).
    pub fn vouch(
        &self,
        callee: Service,
        operator: Option<Vouched>,
        method: &str,
        path_and_query: &str,
        body: &[u8],
    ) -> String {
        let request = Request::received(method, path_and_query, body);
        bearer(&self.sign(callee, VOUCHED_LIFETIME, operator, Some(request), now()))
    }

    fn sign(
        &self,
        callee: Service,
        lifetime: Duration,
        operator: Option<Vouched>,
        request: Option<Request>,
        now: u64,
    ) -> String {
        let mut nonce = [0u8; 16];
        rand::rng().fill_bytes(&mut nonce);
        let claims = Claims {
            iss: self.me.name().to_owned(),
            aud: callee.name().to_owned(),
            iat: now,
            exp: now + lifetime.as_secs(),
            jti: nonce.iter().map(|b| format!("{b:02x}")).collect(),
            operator,
            request: request.as_ref().map(|r| r.line.clone()),
            body: request.map(|r| r.body),
        };
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(kid(self.me, &self.key.id));
        // Ed25519 over our own claims: nothing here can fail but a broken key, which
        // `OwnKey` never holds.
        jsonwebtoken::encode(&header, &claims, self.key.encoding()).unwrap_or_default()
    }
}

/// The one request a credential is made for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `<METHOD> <path and query>`.
    pub line: String,
    /// [`digest`] of its body.
    pub body: String,
}

impl Request {
    /// The request as it is sent, or as the callee received it.
    pub fn received(method: &str, path_and_query: &str, body: &[u8]) -> Request {
        Request {
            line: format!("{method} {path_and_query}"),
            body: digest(body),
        }
    }
}

fn bearer(credential: &str) -> String {
    format!("Bearer {credential}")
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Why a call is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No credential, or one that is forged, expired, for another callee or request, or
    /// signed with a key this service does not trust: 401.
    #[error("service credential refused: {0}")]
    Unauthenticated(&'static str),
    /// A good credential from a service the route does not admit: 403.
    #[error("{0} may not call this route")]
    NotAdmitted(Service),
}

/// A call whose credential passed, from a caller the route admits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    pub caller: Service,
    /// The operator vouched for, on a back-office call made for one.
    pub operator: Option<Vouched>,
    /// The one request it was made for, if it was.
    pub request: Option<Request>,
}

/// Checks the credentials of calls to this service.
#[derive(Clone)]
pub struct Verifier {
    me: Service,
    trust: Trust,
    validation: Validation,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier")
            .field("me", &self.me)
            .field("trust", &self.trust)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer")
            .field("me", &self.me)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl Admitted {
    /// `Unauthenticated` unless the credential was made for `received`, this very request:
    /// one seen in transit is then good for nothing but the request it came with, unchanged,
    /// within its minute.
    pub fn made_for(self, received: &Request) -> Result<Admitted, Refusal> {
        if self.request.as_ref() == Some(received) {
            Ok(self)
        } else {
            tracing::warn!(
                credential.request = self.request.as_ref().map_or("", |r| r.line.as_str()),
                "service credential made for another request"
            );
            Err(Refusal::Unauthenticated("made for another request"))
        }
    }
}

impl Verifier {
    pub fn new(me: Service, trust: Trust) -> Verifier {
        let mut validation = Validation::new(Algorithm::EdDSA);
        validation.set_audience(&[me.name()]);
        validation.set_required_spec_claims(&["exp", "iat", "aud", "iss"]);
        validation.leeway = LEEWAY.as_secs();
        Verifier {
            me,
            trust,
            validation,
        }
    }

    /// The call's caller, if its credential passes and `route` admits it. One signature
    /// check; the route's list is read only once the signature holds, so a stranger learns
    /// nothing of who is admitted.
    pub fn admit(&self, headers: &HeaderMap, route: InternalRoute) -> Result<Admitted, Refusal> {
        debug_assert_eq!(route.callee(), self.me, "{route:?} is not served here");
        self.check(headers, route).inspect_err(|refusal| {
            // A caller knocking where it may not, or a key out of step: ours to look at
            // (the alert InternalCallsRefused counts the answers).
            tracing::warn!(
                internal.route = route.path(),
                error.message = %refusal,
                "internal call refused"
            );
        })
    }

    fn check(&self, headers: &HeaderMap, route: InternalRoute) -> Result<Admitted, Refusal> {
        let credential = headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or(Refusal::Unauthenticated("no bearer credential"))?;
        // Ours are a few hundred bytes; a longer one costs a signature check for nothing.
        if credential.len() > MAX_LENGTH {
            return Err(Refusal::Unauthenticated("not a credential"));
        }
        let header = jsonwebtoken::decode_header(credential)
            .map_err(|_| Refusal::Unauthenticated("not a credential"))?;
        let (signer, key) = header
            .kid
            .as_deref()
            .and_then(|kid| self.trust.get(kid))
            .ok_or(Refusal::Unauthenticated(
                "signed with a key not trusted here",
            ))?;
        let claims = jsonwebtoken::decode::<Claims>(credential, key, &self.validation)
            .map_err(|e| {
                Refusal::Unauthenticated(match e.kind() {
                    jsonwebtoken::errors::ErrorKind::ExpiredSignature => "past its time",
                    jsonwebtoken::errors::ErrorKind::InvalidAudience => "for another service",
                    _ => "forged or malformed",
                })
            })?
            .claims;
        let now = now();
        if claims.iss != signer.name() {
            return Err(Refusal::Unauthenticated(
                "names another service than its key's",
            ));
        }
        // A credential made for one request lives a minute, any other five.
        let lifetime = if claims.request.is_some() {
            VOUCHED_LIFETIME
        } else {
            LIFETIME
        };
        if claims.iat > now + LEEWAY.as_secs()
            || claims.exp.saturating_sub(claims.iat) > lifetime.as_secs()
        {
            return Err(Refusal::Unauthenticated(
                "issued in the future or for too long",
            ));
        }
        if !route.callers().contains(signer) {
            return Err(Refusal::NotAdmitted(*signer));
        }
        let request = match (claims.request, claims.body) {
            (Some(line), Some(body)) => Some(Request { line, body }),
            (None, None) => None,
            _ => return Err(Refusal::Unauthenticated("names half a request")),
        };
        Ok(Admitted {
            caller: *signer,
            operator: claims.operator,
            request,
        })
    }
}

#[cfg(test)]
mod tests;
