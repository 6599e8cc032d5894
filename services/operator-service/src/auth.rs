//! Operator tokens: HS256 JWTs with `{sub, role, exp}`, the algorithm pinned. Missing or
//! bad token: 401; a role the route does not admit: 403.

use std::collections::HashSet;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, web};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use server::token_schemes::BearerScheme;

use std::collections::BTreeMap;

use back_office::role::Admits;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{RefOr, Response};

use crate::error::{self, OpError};

envelope::refusals! {
    /// Why an operator may not call a route.
    pub enum AccessRefusal in Operator {
        /// No bearer token, a bad signature or algorithm, an expired token or an unknown role.
        Unauthenticated => 401, "Unauthorized";
        /// A role the route does not admit: other than admin and super_admin on an admin
        /// route, other than super_admin on a super_admin route.
        NotAdmin => 403, "Forbidden resource";
    }
}

/// The operator roles, one type with the keepers'.
pub use back_office::role::Role;

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    role: String,
    exp: i64,
}

/// The operator bearer token, as the document names it.
pub const SCHEME: BearerScheme = BearerScheme::jwt(
    "operator",
    "An operator JWT: HS256 signed with OPERATOR_JWT_SECRET, claims `{sub, role, exp}`, role one of \
     super_admin, admin, merchant_manager, store_manager, data_entry (`operator-service token --role R \
     --sub N` prints one). The role names in an operation's security requirement are the roles it admits.",
);

#[derive(Clone)]
pub struct OperatorKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
}

impl OperatorKeys {
    pub fn new(secret: &[u8]) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.required_spec_claims = HashSet::from(["sub".to_owned(), "exp".to_owned()]);
        Self {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            validation,
        }
    }

    /// A token for `sub` with `role`, valid for `hours`.
    pub fn issue(
        &self,
        sub: &str,
        role: Role,
        hours: i64,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let claims = Claims {
            sub: sub.to_owned(),
            role: role.as_str().to_owned(),
            exp: chrono::Utc::now().timestamp() + hours * 3600,
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
    }

    fn verify(&self, token: &str) -> Option<Operator> {
        let claims = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .ok()?
            .claims;
        Some(Operator {
            id: claims.sub,
            role: claims.role.parse().ok()?,
        })
    }
}

/// The caller of an operator route.
#[derive(Debug, Clone)]
pub struct Operator {
    pub id: String,
    pub role: Role,
}

impl Operator {
    /// 403 unless the role is admin or super_admin.
    pub fn require_admin(&self) -> Result<(), OpError> {
        if self.role.is_admin() {
            Ok(())
        } else {
            Err(AccessRefusal::NotAdmin.into())
        }
    }
}

impl FromRequest for Operator {
    type Error = OpError;
    type Future = std::future::Ready<Result<Self, OpError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let keys = req.app_data::<web::Data<OperatorKeys>>();
        let token = server::caller::authorization(req).and_then(|v| v.strip_prefix("Bearer "));
        let operator = match (keys, token) {
            (Some(keys), Some(token)) => keys.verify(token.trim()),
            _ => None,
        };
        std::future::ready(operator.ok_or_else(|| AccessRefusal::Unauthenticated.into()))
    }
}

/// Documents on `operation` who may call it and what every operator route answers besides
/// its own: the security requirement naming the roles `admits`, the token's 401, the role's
/// 403, a body's 413 (`takes_body`), 500 and the busy 503; then `kind`'s answers (the
/// relay's, for the back office), which replace a shared one of their status; then the
/// operation's own, which are documented beside a shared one of their status (an offer's 403
/// above the programme's limit).
pub fn document_access(
    operation: &mut Operation,
    admits: Admits,
    takes_body: bool,
    kind: BTreeMap<String, RefOr<Response>>,
) {
    operation.security = Some(vec![SecurityRequirement::new(
        SCHEME.name(),
        admits.roles().map(|role| role.as_str()),
    )]);
    let mut list = vec![("401", error::unauthorized_401())];
    match admits {
        Admits::All => {}
        Admits::Admins => list.push(("403", error::forbidden_403())),
        Admits::SuperAdmin => list.push(("403", error::forbidden_super_admin_403())),
    }
    if takes_body {
        list.push(("413", error::TOO_LARGE_413.to_owned()));
    }
    list.push(("500", error::internal_500()));
    list.push(("503", db::BUSY_ANSWER.to_owned()));
    let list: Vec<(&str, &str)> = list.iter().map(|(s, d)| (*s, d.as_str())).collect();
    let mut answers = envelope::openapi::answers(envelope::Envelope::Operator, &list);
    answers.extend(kind);
    envelope::openapi::merge_answers(
        &mut answers,
        std::mem::take(&mut operation.responses.responses),
    );
    operation.responses.responses = answers;
}
