//! The address book: `GET`/`POST /api/v1/clients/address-book`, `GET`/`PUT`/`DELETE
//! /api/v1/clients/address-book/{id}`. Answers are `{status, data}`.

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};

use crate::address_book::{
    self, Address, AddressKey, AddressRefusal, BookRefusal, FieldRefusal, Target,
};
use crate::caller::PrimaryCaller;
use crate::error::AuthError;
use crate::profile::Wrapped;
use crate::profile_update::{BodyRefusal, body_object};
use crate::state::AppState;
use envelope::Refuses;

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
    #[schema(nullable = false, max_length = 50, example = "Home")]
    label: Option<String>,
    #[schema(nullable = false, max_length = 255, example = "King Fahd Road 12")]
    address_line: Option<String>,
    #[schema(nullable = false, max_length = 100, example = "Riyadh")]
    city: Option<String>,
    #[schema(max_length = 100, example = "Olaya")]
    district: Option<String>,
    #[schema(max_length = 50, example = "Tower B")]
    building: Option<String>,
    #[schema(nullable = false, example = 24.6907)]
    latitude: Option<f64>,
    #[schema(nullable = false, example = 46.6855)]
    longitude: Option<f64>,
    #[schema(max_length = 500, example = "Second floor")]
    notes: Option<String>,
    #[schema(nullable = false, example = true)]
    is_default: Option<bool>,
}

/// The path of a route that names an address.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct AddressId {
    /// 24 hex characters; on PUT, the address's legacy numeric id too.
    id: String,
}

/// create's refusals: its body, its fields, a full book.
type CreateRefusals = Refuses<(BodyRefusal, FieldRefusal, BookRefusal)>;

/// update's refusals: its body, its fields, the address's id, or no such address.
type UpdateRefusals = Refuses<(BodyRefusal, FieldRefusal, AddressRefusal)>;

/// The refusals of get and delete: the address's id, or no such address of the caller's.
/// The field rules are listed too, as the document always has.
type ByIdRefusals = Refuses<(FieldRefusal, AddressRefusal)>;

fn key(raw: &str, legacy_allowed: bool) -> Result<AddressKey, AuthError> {
    Ok(AddressKey::parse(raw, legacy_allowed).ok_or(AddressRefusal::BadId)?)
}

fn hex_id(raw: &str) -> Result<String, AuthError> {
    match key(raw, false)? {
        AddressKey::Id(id) => Ok(id),
        AddressKey::Legacy(_) => Err(AddressRefusal::BadId.into()),
    }
}

/// The caller's addresses, the default first.
///
/// At most 50 (a client saves no more), so no pages.
#[utoipa::path(get, path = "/clients/address-book",
    responses((status = 200, description = "`{status: 200, data: [address]}`", body = Wrapped<Vec<Address>>)))]
pub async fn list_addresses(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AuthError> {
    let mut conn = state.pool.get().await?;
    let addresses = address_book::list(&mut conn, caller.client_id).await?;
    Ok(HttpResponse::Ok().json(Wrapped::ok(addresses)))
}

/// Saves a new address.
///
/// is_default true clears the other defaults. A client saves at most 50 addresses.
#[utoipa::path(post, path = "/clients/address-book", request_body = AddressBody, responses(CreateRefusals,
        (status = 201, description = "`{status: 201, data: address}`", body = Wrapped<Address>)))]
pub async fn create_address(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, AuthError> {
    let body = body_object(&body)?;
    let fields = address_book::fields(&body, true)?;
    let mut conn = state.pool.get().await?;
    let address = address_book::save(&mut conn, caller.client_id, Target::New, fields).await?;
    Ok(HttpResponse::Created().json(Wrapped {
        status: 201,
        data: address,
    }))
}

/// One of the caller's addresses; another client's is not found.
#[utoipa::path(get, path = "/clients/address-book/{id}", params(AddressId),
    responses(ByIdRefusals, (status = 200, body = Wrapped<Address>)))]
pub async fn get_address(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
    path: web::Path<AddressId>,
) -> Result<HttpResponse, AuthError> {
    let id = hex_id(&path.id)?;
    let mut conn = state.pool.get().await?;
    let address = address_book::get(&mut conn, caller.client_id, &id).await?;
    Ok(HttpResponse::Ok().json(Wrapped::ok(address)))
}

/// Changes one of the caller's addresses: only the fields present.
///
/// The id is the 24 hex characters, or the address's legacy numeric id; another client's
/// address is not found.
#[utoipa::path(put, path = "/clients/address-book/{id}", params(AddressId), request_body = AddressBody,
    responses(UpdateRefusals, (status = 200, body = Wrapped<Address>)))]
pub async fn update_address(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
    path: web::Path<AddressId>,
    body: web::Bytes,
) -> Result<HttpResponse, AuthError> {
    let key = key(&path.id, true)?;
    let body = body_object(&body)?;
    let fields = address_book::fields(&body, false)?;
    let mut conn = state.pool.get().await?;
    let address =
        address_book::save(&mut conn, caller.client_id, Target::Existing(&key), fields).await?;
    Ok(HttpResponse::Ok().json(Wrapped::ok(address)))
}

/// Deletes one of the caller's addresses; another client's is not found.
#[utoipa::path(delete, path = "/clients/address-book/{id}", params(AddressId), responses(ByIdRefusals,
        (status = 200, description = "`{status: 200, data: {id}}`", body = Wrapped<Deleted>)))]
pub async fn delete_address(
    PrimaryCaller(caller): PrimaryCaller,
    state: web::Data<AppState>,
    path: web::Path<AddressId>,
) -> Result<HttpResponse, AuthError> {
    let id = hex_id(&path.id)?;
    let mut conn = state.pool.get().await?;
    address_book::delete(&mut conn, caller.client_id, &id).await?;
    Ok(HttpResponse::Ok().json(Wrapped::ok(Deleted { id })))
}
