//! The address book: `GET`/`POST /api/v1/clients/address-book`, `GET`/`PUT`/`DELETE
//! /api/v1/clients/address-book/{id}`. Answers are `{status, data}`.

use actix_web::{HttpResponse, web};
use serde_json::json;

use crate::address_book::{self, AddressKey};
use crate::caller::PrimaryCaller;
use crate::error::AuthError;
use crate::profile::Wrapped;
use crate::profile_update::body_object;
use crate::state::AppState;

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

#[utoipa::path(get, path = "/api/v1/clients/address-book", tag = "address book", security(("primary" = [])),
    responses((status = 200, description = "`{status: 200, data: [address]}`, the default first; at most 50 (a client saves no more), so no pages", body = crate::routes::doc::AddressListAnswer), (status = 401, description = "no token, a token of the wrong kind, or an inactive client", body = envelope::schema::DocErrorA)))]
pub async fn list(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AuthError> {
    let mut conn = state.pool.get().await?;
    let addresses = address_book::list(&mut conn, caller.client_id).await?;
    Ok(HttpResponse::Ok().json(Wrapped::ok(addresses)))
}

#[utoipa::path(post, path = "/api/v1/clients/address-book", tag = "address book", security(("primary" = [])),
    request_body = crate::routes::doc::AddressBody,
    responses((status = 201, description = "`{status: 201, data: address}`; is_default true clears the other defaults", body = crate::routes::doc::AddressAnswer), (status = 400, description = "a field is missing or invalid (`<field> is required`, `<field> is invalid`), or `address book is full: at most 50 addresses` (a client saves at most 50)", body = envelope::schema::DocErrorA), (status = 401, description = "no token, a token of the wrong kind, or an inactive client", body = envelope::schema::DocErrorA)))]
pub async fn create(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, AuthError> {
    let body = body_object(&body).map_err(AuthError::Invalid)?;
    let fields = address_book::fields(&body, true).map_err(AuthError::Invalid)?;
    let mut conn = state.pool.get().await?;
    let address = address_book::create(&mut conn, caller.client_id, fields).await?;
    Ok(HttpResponse::Created().json(json!({"status": 201, "data": address})))
}

#[utoipa::path(get, path = "/api/v1/clients/address-book/{id}", tag = "address book", security(("primary" = [])),
    params(("id" = String, Path, description = "24 hex characters")),
    responses((status = 200, description = "the caller's address", body = crate::routes::doc::AddressAnswer), (status = 400, description = "a field is missing or invalid (`<field> is required`, `<field> is invalid`), or the id is not 24 hex characters", body = envelope::schema::DocErrorA), (status = 404, description = "`address not found`: unknown, or another client's", body = envelope::schema::DocErrorA), (status = 401, description = "no token, a token of the wrong kind, or an inactive client", body = envelope::schema::DocErrorA)))]
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

#[utoipa::path(put, path = "/api/v1/clients/address-book/{id}", tag = "address book", security(("primary" = [])),
    params(("id" = String, Path, description = "24 hex characters, or the address's legacy numeric id")),
    request_body = crate::routes::doc::AddressBody,
    responses((status = 200, description = "partial update", body = crate::routes::doc::AddressAnswer), (status = 400, description = "a field is missing or invalid (`<field> is required`, `<field> is invalid`), or the id is not 24 hex characters", body = envelope::schema::DocErrorA), (status = 404, description = "`address not found`: unknown, or another client's", body = envelope::schema::DocErrorA), (status = 401, description = "no token, a token of the wrong kind, or an inactive client", body = envelope::schema::DocErrorA)))]
pub async fn update(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, AuthError> {
    let key = key(&path, true)?;
    let body = body_object(&body).map_err(AuthError::Invalid)?;
    let fields = address_book::fields(&body, false).map_err(AuthError::Invalid)?;
    let mut conn = state.pool.get().await?;
    let address = address_book::update(&mut conn, caller.client_id, &key, fields).await?;
    Ok(HttpResponse::Ok().json(Wrapped::ok(address)))
}

#[utoipa::path(delete, path = "/api/v1/clients/address-book/{id}", tag = "address book", security(("primary" = [])),
    params(("id" = String, Path, description = "24 hex characters")),
    responses((status = 200, description = "`{status: 200, data: {id}}`", body = crate::routes::doc::DeletedAnswer), (status = 400, description = "a field is missing or invalid (`<field> is required`, `<field> is invalid`), or the id is not 24 hex characters", body = envelope::schema::DocErrorA), (status = 404, description = "`address not found`: unknown, or another client's", body = envelope::schema::DocErrorA), (status = 401, description = "no token, a token of the wrong kind, or an inactive client", body = envelope::schema::DocErrorA)))]
pub async fn delete(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, AuthError> {
    let id = hex_id(&path)?;
    let mut conn = state.pool.get().await?;
    address_book::delete(&mut conn, caller.client_id, &id).await?;
    Ok(HttpResponse::Ok().json(Wrapped::ok(json!({"id": id}))))
}
