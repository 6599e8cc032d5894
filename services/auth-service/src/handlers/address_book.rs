//! The address book: `GET`/`POST /api/v1/clients/address-book`, `GET`/`PUT`/`DELETE
//! /api/v1/clients/address-book/{id}`. Answers are `{status, data}`.

use actix_web::{HttpResponse, web};
use serde::Serialize;

use crate::address_book::{self, AddressKey, Target};
use crate::caller::PrimaryCaller;
use crate::error::{AuthError, Fault, TokenAnswers};
use crate::profile::Wrapped;
use crate::profile_update::body_object;
use crate::state::AppState;

/// What a delete answers.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Deleted {
    id: String,
}

/// label (≤ 50), address_line (≤ 255), city (≤ 100), latitude and longitude are required
/// on create; district (≤ 100), building (≤ 50) and notes (≤ 500) are optional (null or
/// empty clears); is_default is a boolean. The document's view of the rules of
/// `address_book::fields`, which reads the raw JSON.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct AddressBody {
    #[schema(max_length = 50, example = "Home")]
    label: Option<String>,
    #[schema(max_length = 255, example = "King Fahd Road 12")]
    address_line: Option<String>,
    #[schema(max_length = 100, example = "Riyadh")]
    city: Option<String>,
    #[schema(max_length = 100, example = "Olaya")]
    district: Option<String>,
    #[schema(max_length = 50, example = "Tower B")]
    building: Option<String>,
    #[schema(example = 24.6907)]
    latitude: Option<f64>,
    #[schema(example = 46.6855)]
    longitude: Option<f64>,
    #[schema(max_length = 500, example = "Second floor")]
    notes: Option<String>,
    #[schema(example = true)]
    is_default: Option<bool>,
}

const BAD_ID: &str = "id must be a 24-character hex ObjectId";

fn key(raw: &str, legacy_allowed: bool) -> Result<AddressKey, AuthError> {
    AddressKey::parse(raw, legacy_allowed).ok_or_else(|| AuthError::invalid(BAD_ID))
}

fn hex_id(raw: &str) -> Result<String, AuthError> {
    match key(raw, false)? {
        AddressKey::Id(id) => Ok(id),
        AddressKey::Legacy(_) => Err(AuthError::invalid(BAD_ID)),
    }
}

#[utoipa::path(get, path = "/clients/address-book", tag = "address book", security(("primary" = [])),
    responses(TokenAnswers, (status = 200, description = "`{status: 200, data: [address]}`, the default first; at most 50 (a client saves no more), so no pages", body = Wrapped<Vec<crate::address_book::Address>>)))]
pub async fn list(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AuthError> {
    let mut conn = state.pool.get().await?;
    let addresses = address_book::list(&mut conn, caller.client_id).await?;
    Ok(HttpResponse::Ok().json(Wrapped::ok(addresses)))
}

#[utoipa::path(post, path = "/clients/address-book", tag = "address book", security(("primary" = [])),
    request_body = AddressBody,
    responses(TokenAnswers, (status = 201, description = "`{status: 201, data: address}`; is_default true clears the other defaults", body = Wrapped<crate::address_book::Address>), (status = 400, description = "a field is missing or invalid (`<field> is required`, `<field> is invalid`), or `address book is full: at most 50 addresses` (a client saves at most 50)", body = envelope::ErrorA)))]
pub async fn create(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, AuthError> {
    let body = body_object(&body).map_err(Fault::Invalid)?;
    let fields = address_book::fields(&body, true).map_err(Fault::Invalid)?;
    let mut conn = state.pool.get().await?;
    let address = address_book::save(&mut conn, caller.client_id, Target::New, fields).await?;
    Ok(HttpResponse::Created().json(Wrapped {
        status: 201,
        data: address,
    }))
}

#[utoipa::path(get, path = "/clients/address-book/{id}", tag = "address book", security(("primary" = [])),
    params(("id" = String, Path, description = "24 hex characters")),
    responses(TokenAnswers, (status = 200, description = "the caller's address", body = Wrapped<crate::address_book::Address>), (status = 400, description = "a field is missing or invalid (`<field> is required`, `<field> is invalid`), or the id is not 24 hex characters", body = envelope::ErrorA), (status = 404, description = "`address not found`: unknown, or another client's", body = envelope::ErrorA)))]
pub async fn get(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, AuthError> {
    let id = hex_id(&path)?;
    let mut conn = state.pool.get().await?;
    let address = address_book::get(&mut conn, caller.client_id, &id).await?;
    Ok(HttpResponse::Ok().json(Wrapped::ok(address)))
}

#[utoipa::path(put, path = "/clients/address-book/{id}", tag = "address book", security(("primary" = [])),
    params(("id" = String, Path, description = "24 hex characters, or the address's legacy numeric id")),
    request_body = AddressBody,
    responses(TokenAnswers, (status = 200, description = "partial update", body = Wrapped<crate::address_book::Address>), (status = 400, description = "a field is missing or invalid (`<field> is required`, `<field> is invalid`), or the id is not 24 hex characters", body = envelope::ErrorA), (status = 404, description = "`address not found`: unknown, or another client's", body = envelope::ErrorA)))]
pub async fn update(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, AuthError> {
    let key = key(&path, true)?;
    let body = body_object(&body).map_err(Fault::Invalid)?;
    let fields = address_book::fields(&body, false).map_err(Fault::Invalid)?;
    let mut conn = state.pool.get().await?;
    let address =
        address_book::save(&mut conn, caller.client_id, Target::Existing(&key), fields).await?;
    Ok(HttpResponse::Ok().json(Wrapped::ok(address)))
}

#[utoipa::path(delete, path = "/clients/address-book/{id}", tag = "address book", security(("primary" = [])),
    params(("id" = String, Path, description = "24 hex characters")),
    responses(TokenAnswers, (status = 200, description = "`{status: 200, data: {id}}`", body = Wrapped<Deleted>), (status = 400, description = "a field is missing or invalid (`<field> is required`, `<field> is invalid`), or the id is not 24 hex characters", body = envelope::ErrorA), (status = 404, description = "`address not found`: unknown, or another client's", body = envelope::ErrorA)))]
pub async fn delete(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, AuthError> {
    let id = hex_id(&path)?;
    let mut conn = state.pool.get().await?;
    address_book::delete(&mut conn, caller.client_id, &id).await?;
    Ok(HttpResponse::Ok().json(Wrapped::ok(Deleted { id })))
}
