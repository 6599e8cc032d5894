//! `PUT /api/v1/clients/{client_id}` (profile) and `PUT /api/v1/clients/setting` (push).
//! The caller is resolved first: no token, a legacy token or an inactive client gets 401
//! before the body is looked at.

use actix_web::{HttpResponse, web};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::Value;

use crate::caller::PrimaryCaller;
use crate::db::schema::clients;
use crate::error::AuthError;
use crate::profile::{Profile, ProfileAnswer};
use crate::profile_update::{
    BodyRefusal, ProfileRefusal, SettingRefusal, body_object, profile_changes, push_setting,
};
use crate::state::AppState;
use envelope::Refuses;

/// The profile body as the document shows it: every key is optional; only the keys
/// present change. push_enabled and unknown keys are ignored (`profile_update` reads the
/// raw JSON).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct ProfileBody {
    /// Integer or numeric string; must be the caller's.
    client_id: Option<Value>,
    /// Cannot change: must equal the stored phone with whitespace removed.
    #[schema(example = "+966500000001")]
    contact_phone: Option<String>,
    /// Null clears; at most 100 characters after trimming.
    #[schema(example = "Sara")]
    first_name: Option<String>,
    last_name: Option<String>,
    /// No format check; stored trimmed.
    email_address: Option<String>,
    /// Any date a standard parser reads (or epoch milliseconds); stored as the UTC date.
    #[schema(example = "1990-01-10")]
    birth_date: Option<String>,
    /// 1 male, 2 female; anything else is stored as 0.
    sex: Option<Value>,
    /// 1, "1" and true mean on; anything else off.
    receive_offers: Option<Value>,
}

/// The profile route's path: read as text, so that a client_id that is not the caller's,
/// a number or not, gets the route's own 400 ([`profile_changes`]).
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ProfilePath {
    /// Must be the caller's.
    #[param(value_type = i64, example = 1001)]
    client_id: String,
}

/// The profile route's refusals: its body, then its rules in the spec's order.
type ProfileRefusals = Refuses<(BodyRefusal, ProfileRefusal)>;

/// The push setting's refusals: its body, then its rules.
type SettingRefusals = Refuses<(BodyRefusal, SettingRefusal)>;

/// The setting body as the document shows it.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct SettingBody {
    /// Integer or numeric string; must be the caller's.
    client_id: Value,
    /// 1, "1" and true switch on; anything else off.
    push_enabled: Value,
}

/// Updates the caller's profile.
///
/// Only the keys present change, and nothing is written unless every rule passes: the 400
/// is the first failing rule, checked in this order: client_id, contact_phone, first_name,
/// last_name, email_address, birth_date.
#[utoipa::path(put, path = "/clients/{client_id}", params(ProfilePath), request_body = ProfileBody,
    responses(ProfileRefusals, ProfileAnswer))]
pub async fn update_profile(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
    path: web::Path<ProfilePath>,
    body: web::Bytes,
) -> Result<HttpResponse, AuthError> {
    let body = body_object(&body)?;
    let changes = profile_changes(&path.client_id, &body, &caller)?;
    let mut conn = state.pool.get().await?;
    let profile = diesel::update(clients::table.find(caller.client_id))
        .set((&changes, clients::updated_at.eq(diesel::dsl::now)))
        .returning(Profile::as_returning())
        .get_result(&mut conn)
        .await?;
    Ok(HttpResponse::Ok().json(profile))
}

/// Switches the caller's push notifications.
///
/// client_id is checked first; no body counts as an empty one.
#[utoipa::path(put, path = "/clients/setting", request_body = SettingBody,
    responses(SettingRefusals, ProfileAnswer))]
pub async fn update_setting(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, AuthError> {
    let body = body_object(&body)?;
    let push_enabled = push_setting(&body, &caller)?;
    let mut conn = state.pool.get().await?;
    let profile = diesel::update(clients::table.find(caller.client_id))
        .set((
            clients::push_enabled.eq(push_enabled),
            clients::updated_at.eq(diesel::dsl::now),
        ))
        .returning(Profile::as_returning())
        .get_result(&mut conn)
        .await?;
    Ok(HttpResponse::Ok().json(profile))
}
