//! Who is calling: extractors that resolve the `Authorization` header to an active client
//! before the handler (and before its body is read).

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, web};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures_util::future::LocalBoxFuture;

use crate::db::schema::{clients, legacy_tokens};
use crate::error::{AuthError, Fault};
use crate::profile::Profile;
use crate::state::AppState;
use crate::tokens::{bearer, legacy_hash};

envelope::refusals! {
    /// Why a caller is not let in.
    pub enum AccessRefusal in A {
        /// No token, a token of the wrong kind, an unknown token, an inactive client, or a
        /// missing, forged or expired service credential: the spec's one 401 of the auth routes.
        Unauthorized => 401, "Unauthorization";
    }
}

envelope::refusals! {
    /// Why an internal route serves its caller nothing beyond the 401 above.
    pub enum InternalRefusal in A {
        /// A good credential of a service the route does not admit
        /// (`service_identity::InternalRoute::callers`).
        NotAdmitted => 403, [service_identity::NOT_ADMITTED];
    }
}

/// A client holding a valid primary token (a JWT). Legacy tokens get 401.
pub struct PrimaryCaller(pub Profile);

/// A client holding a valid legacy token (the caller lookup of the other services).
pub struct LegacyCaller(pub Profile);

fn state(req: &HttpRequest) -> Result<web::Data<AppState>, AuthError> {
    req.app_data::<web::Data<AppState>>()
        .cloned()
        .ok_or_else(|| Fault::Internal("app state missing".into()).into())
}

fn token(req: &HttpRequest) -> Option<String> {
    bearer(server::caller::authorization(req)).map(str::to_owned)
}

/// Which token a route takes.
#[derive(Clone, Copy)]
enum Kind {
    Primary,
    Legacy,
}

/// The active client a token of `kind` belongs to, or 401.
async fn resolve(req: &HttpRequest, kind: Kind) -> Result<Profile, AuthError> {
    let state = state(req)?;
    let token = token(req).ok_or(AccessRefusal::Unauthorized)?;
    let profile = match kind {
        Kind::Primary => {
            let client_id = state
                .tokens
                .verify_primary(&token)
                .ok_or(AccessRefusal::Unauthorized)?;
            let mut conn = state.pool.get().await?;
            clients::table
                .find(client_id)
                .select(Profile::as_select())
                .first(&mut conn)
                .await
                .optional()?
        }
        Kind::Legacy => {
            let mut conn = state.pool.get().await?;
            find_by_legacy_token(&mut conn, &token).await?
        }
    };
    active(profile)
}

/// The extractor of a caller of one kind of token: `$extractor(Profile)` from [`resolve`].
macro_rules! caller_extractor {
    ($extractor:ident, $kind:expr) => {
        impl FromRequest for $extractor {
            type Error = AuthError;
            type Future = LocalBoxFuture<'static, Result<Self, AuthError>>;

            fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
                let req = req.clone();
                Box::pin(async move { resolve(&req, $kind).await.map($extractor) })
            }
        }
    };
}

caller_extractor!(PrimaryCaller, Kind::Primary);
caller_extractor!(LegacyCaller, Kind::Legacy);

/// The client a legacy token belongs to.
pub async fn find_by_legacy_token(
    conn: &mut diesel_async::AsyncPgConnection,
    token: &str,
) -> Result<Option<Profile>, diesel::result::Error> {
    legacy_tokens::table
        .inner_join(clients::table)
        .filter(legacy_tokens::token_hash.eq(legacy_hash(token)))
        .select(Profile::as_select())
        .first(conn)
        .await
        .optional()
}

/// Only an active client gets through.
pub fn active(profile: Option<Profile>) -> Result<Profile, AuthError> {
    profile
        .filter(Profile::is_active)
        .ok_or_else(|| AccessRefusal::Unauthorized.into())
}
