//! `GET /internal/v1/clients/{id}`: a client's profile for the point and order services, each
//! calling with its own credential (`service_identity`). Never exposed through an ingress.

use actix_web::{HttpRequest, HttpResponse, web};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use crate::caller::{AccessRefusal, InternalRefusal};
use crate::db::schema::clients;
use crate::error::AuthError;
use crate::profile::{ClientRefusal, Profile, ProfileAnswer};
use crate::state::AppState;
use service_identity::{InternalRoute, Refusal};

/// The path: digits only (the route's `{id:[0-9]+}`), read as text so that a number too
/// large for an id is not found rather than unreadable.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ClientPath {
    #[param(value_type = i64, pattern = "^[0-9]+$", example = 1002)]
    id: String,
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
/// A missing, forged or expired service credential gets 401; one of a service that is not the
/// point or the order service, 403.
#[utoipa::path(
    get,
    path = "/clients/{id:[0-9]+}",
    params(ClientPath),
    responses(AccessRefusal, InternalRefusal, NotFoundAnswers, ProfileAnswer)
)]
pub async fn get_client_profile(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<ClientPath>,
) -> Result<HttpResponse, AuthError> {
    state
        .identity
        .admit(req.headers(), InternalRoute::ClientProfile)
        .map_err(|refusal| match refusal {
            Refusal::Unauthenticated(_) => AuthError::from(AccessRefusal::Unauthorized),
            Refusal::NotAdmitted(_) => InternalRefusal::NotAdmitted.into(),
        })?;
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
