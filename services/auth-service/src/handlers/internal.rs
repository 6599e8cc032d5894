//! `GET /internal/v1/clients/{id}`: a client's profile for the other services, guarded by
//! `X-Internal-Token`. Never exposed through an ingress.

use actix_web::{HttpRequest, HttpResponse, web};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use crate::db::schema::clients;
use crate::error::{AuthError, DatabaseAnswers, Fault};
use crate::profile::Profile;
use crate::state::AppState;

#[utoipa::path(get, path = "/clients/{id:[0-9]+}", tag = "internal",
    params(("id" = i64, Path, pattern = "^[0-9]+$", example = 1002), ("X-Internal-Token" = String, Header)),
    responses(DatabaseAnswers, (status = 200, description = "the bare 13-field profile", body = crate::profile::Profile),
        (status = 401, description = "missing or wrong internal token", body = envelope::ErrorA),
        (status = 404, description = "`client not found`; an id that is not all digits matches no route and gets the service's own 404 (`Cannot GET <path>`), whatever the token", body = envelope::ErrorA)))]
pub async fn client(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, AuthError> {
    if !server::internal::token_matches(&req, &state.internal_token) {
        return Err(Fault::Unauthorized.into());
    }
    let Ok(client_id) = path.parse::<domain::ClientId>() else {
        return Err(Fault::NotFound("client").into());
    };
    let mut conn = state.pool.get().await?;
    let profile = clients::table
        .find(client_id.get())
        .select(Profile::as_select())
        .first(&mut conn)
        .await
        .optional()?
        .ok_or(Fault::NotFound("client"))?;
    Ok(HttpResponse::Ok().json(profile))
}
