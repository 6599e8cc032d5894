//! `GET /internal/v1/clients/{id}`: a client's profile for the other services, guarded by
//! `X-Internal-Token`. Never exposed through an ingress.

use actix_web::{HttpRequest, HttpResponse, web};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use crate::caller::AccessRefusal;
use crate::db::schema::clients;
use crate::error::{AuthError, DatabaseAnswers};
use crate::profile::{ClientRefusal, Profile, ProfileAnswer};
use crate::state::AppState;

/// The path: digits only (the route's `{id:[0-9]+}`), read as text so that a number too
/// large for an id is not found rather than unreadable.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ClientPath {
    #[param(value_type = i64, pattern = "^[0-9]+$", example = 1002)]
    id: String,
}

/// The token that opens the internal routes, as the document shows it
/// (`server::internal::token_matches` reads it).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)]
pub struct InternalToken {
    #[param(rename = "X-Internal-Token")]
    token: String,
}

/// The 404 as the document describes it: the route's own ([`ClientRefusal`]), and the
/// service's for an id that is not all digits (it matches no route, whatever the token).
fn not_found_404() -> String {
    format!(
        "`{}`; an id that is not all digits matches no route: `Cannot GET <path>`",
        ClientRefusal::Unknown
    )
}

envelope::answer_set! {
    /// The route's 404s ([`not_found_404`]).
    NotFoundAnswers, envelope::Envelope::A, {
        "404" => not_found_404(),
    }
}

/// A client's bare 13-field profile, for the other services.
///
/// A missing or wrong `X-Internal-Token` gets 401.
#[utoipa::path(
    get,
    path = "/clients/{id:[0-9]+}",
    tag = "internal",
    operation_id = "getClientProfile",
    params(ClientPath, InternalToken),
    responses(DatabaseAnswers, AccessRefusal, NotFoundAnswers, ProfileAnswer)
)]
pub async fn client(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<ClientPath>,
) -> Result<HttpResponse, AuthError> {
    if !server::internal::token_matches(&req, &state.internal_token) {
        return Err(AccessRefusal::Unauthorized.into());
    }
    let Ok(client_id) = path.id.parse::<domain::ClientId>() else {
        return Err(ClientRefusal::Unknown.into());
    };
    let mut conn = state.pool.get().await?;
    let profile = clients::table
        .find(client_id.get())
        .select(Profile::as_select())
        .first(&mut conn)
        .await
        .optional()?
        .ok_or(ClientRefusal::Unknown)?;
    Ok(HttpResponse::Ok().json(profile))
}
