//! Saved delivery addresses: their fields and the rules for them (no HTTP in here).
//!
//! A client only ever sees and touches its own addresses: every query filters by the
//! caller, so another client's id is simply not found. At most one address per client is
//! the default; making one the default clears the others in the same transaction, with the
//! client's row locked so that two such writes take turns (a unique index holds the rule
//! in the database as well). A client holds at most [`MAX_ADDRESSES`] addresses, counted
//! under the same lock, so the table cannot be grown without bound by one account.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use rand::RngCore;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::db::schema::{addresses, clients};
use crate::error::AuthError;

#[derive(Debug, Clone, PartialEq, Serialize, Queryable, Selectable, utoipa::ToSchema)]
#[diesel(table_name = addresses)]
pub struct Address {
    pub id: String,
    pub client_id: i64,
    pub label: String,
    pub address_line: String,
    pub city: String,
    #[schema(required)]
    pub district: Option<String>,
    #[schema(required)]
    pub building: Option<String>,
    pub latitude: f64,
    pub longitude: f64,
    #[schema(required)]
    pub notes: Option<String>,
    pub is_default: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// The fields a body sets; `None` leaves a field alone, `Some(None)` clears an optional one.
#[derive(Debug, Default, AsChangeset)]
#[diesel(table_name = addresses)]
pub struct AddressFields {
    pub label: Option<String>,
    pub address_line: Option<String>,
    pub city: Option<String>,
    pub district: Option<Option<String>>,
    pub building: Option<Option<String>>,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    pub notes: Option<Option<String>>,
    pub is_default: Option<bool>,
}

/// The most addresses one client may save: far above a real address book, and a bound on
/// what one account can store (and on the list's answer, which has no pages).
pub const MAX_ADDRESSES: i64 = 50;

envelope::refusals! {
    /// Why a body's fields are refused ([`fields`]): the first field that breaks its rule.
    pub enum FieldRefusal in A {
        /// A field a new address needs is absent.
        Missing(field: &'static str) => 400, "{field} is required";
        /// A field's value breaks its rule (type, length, range).
        Invalid(field: &'static str) => 400, "{field} is invalid";
    }
}

envelope::refusals! {
    /// Why a new address is refused.
    pub enum BookRefusal in A {
        /// The client already holds [`MAX_ADDRESSES`] addresses (the test
        /// `the_full_book_names_its_limit` holds the two together).
        Full => 400, "address book is full: at most 50 addresses";
    }
}

envelope::refusals! {
    /// Why a path's address is refused.
    pub enum AddressRefusal in A {
        /// The id is not 24 hex characters (nor, on PUT, a legacy number).
        BadId => 400, "id must be a 24-character hex ObjectId";
        /// No address of the caller's has this id: unknown, or another client's.
        NotFound => 404, "address not found";
    }
}

/// (field, maximum characters) of the required text fields, then of the optional ones.
const REQUIRED_TEXT: [(&str, usize); 3] = [("label", 50), ("address_line", 255), ("city", 100)];
const OPTIONAL_TEXT: [(&str, usize); 3] = [("district", 100), ("building", 50), ("notes", 500)];

/// The value of `key` as `read` takes it (`None` from `read`: [`FieldRefusal::Invalid`]);
/// an absent key is [`FieldRefusal::Missing`] when `required`, else `None`.
fn field<T>(
    body: &Map<String, Value>,
    key: &'static str,
    required: bool,
    read: impl FnOnce(&Value) -> Option<T>,
) -> Result<Option<T>, FieldRefusal> {
    match body.get(key) {
        None if required => Err(FieldRefusal::Missing(key)),
        None => Ok(None),
        Some(value) => read(value).map(Some).ok_or(FieldRefusal::Invalid(key)),
    }
}

/// Text of 1 to `max` characters after trimming, trimmed.
fn text(max: usize) -> impl Fn(&Value) -> Option<String> {
    move |value| {
        value
            .as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty() && s.chars().count() <= max)
            .map(str::to_owned)
    }
}

/// A number from `-limit` to `limit`.
fn coordinate(limit: f64) -> impl Fn(&Value) -> Option<f64> {
    move |value| value.as_f64().filter(|f| f.abs() <= limit)
}

/// An optional text field: `Some(None)` clears it (null or blank), `None` leaves it.
fn optional_text(
    body: &Map<String, Value>,
    key: &'static str,
    max: usize,
) -> Result<Option<Option<String>>, FieldRefusal> {
    match body.get(key) {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(None)),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(Some(None)),
        Some(_) => field(body, key, false, text(max)).map(Some),
    }
}

/// Reads a body, field by field in a fixed order (the first problem is the answer). For a
/// new address `label`, `address_line`, `city`, `latitude` and `longitude` are required.
pub fn fields(body: &Map<String, Value>, creating: bool) -> Result<AddressFields, FieldRefusal> {
    let [label, address_line, city] =
        REQUIRED_TEXT.map(|(key, max)| field(body, key, creating, text(max)));
    let (label, address_line, city) = (label?, address_line?, city?);
    let latitude = field(body, "latitude", creating, coordinate(90.0))?;
    let longitude = field(body, "longitude", creating, coordinate(180.0))?;
    let [district, building, notes] = OPTIONAL_TEXT.map(|(key, max)| optional_text(body, key, max));
    let (district, building, notes) = (district?, building?, notes?);
    let is_default = field(body, "is_default", false, Value::as_bool)?;
    Ok(AddressFields {
        label,
        address_line,
        city,
        district,
        building,
        latitude,
        longitude,
        notes,
        is_default,
    })
}

/// A new id in the legacy store's shape: 4 bytes of seconds, then 8 random bytes, in hex.
pub fn new_id() -> String {
    let mut bytes = [0_u8; 12];
    let seconds = u32::try_from(Utc::now().timestamp()).unwrap_or(u32::MAX);
    bytes[..4].copy_from_slice(&seconds.to_be_bytes());
    rand::rng().fill_bytes(&mut bytes[4..]);
    hex::encode(bytes)
}

/// How a path names an address: its 24-hex id, or (PUT only) its legacy numeric id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddressKey {
    Id(String),
    Legacy(i64),
}

impl AddressKey {
    pub fn parse(raw: &str, legacy_allowed: bool) -> Option<Self> {
        if domain::ObjectId::is_valid(raw) {
            return Some(Self::Id(raw.to_ascii_lowercase()));
        }
        if legacy_allowed && !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
            return raw.parse().ok().map(Self::Legacy);
        }
        None
    }
}

async fn lock_owner(conn: &mut AsyncPgConnection, client_id: i64) -> QueryResult<()> {
    clients::table
        .find(client_id)
        .select(clients::client_id)
        .for_update()
        .first::<i64>(conn)
        .await
        .map(|_| ())
}

async fn clear_default(conn: &mut AsyncPgConnection, client_id: i64) -> QueryResult<()> {
    diesel::update(
        addresses::table
            .filter(addresses::client_id.eq(client_id))
            .filter(addresses::is_default),
    )
    .set(addresses::is_default.eq(false))
    .execute(conn)
    .await
    .map(|_| ())
}

/// Writes `fields` on the client's address `id` (its owner locked, see [`lock_owner`]) and
/// reads it back: a new default first takes the flag from the old one (one default per
/// client, `addresses_one_default`); `updated_at` becomes the transaction's time, which on
/// a new address is its `created_at`.
async fn write_fields(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    id: &str,
    fields: &AddressFields,
) -> Result<Address, AuthError> {
    if fields.is_default == Some(true) {
        clear_default(conn, client_id).await?;
    }
    diesel::update(addresses::table.find(id))
        .set((fields, addresses::updated_at.eq(diesel::dsl::now)))
        .execute(conn)
        .await?;
    get(conn, client_id, id).await
}

pub async fn list(conn: &mut AsyncPgConnection, client_id: i64) -> QueryResult<Vec<Address>> {
    addresses::table
        .filter(addresses::client_id.eq(client_id))
        .order((
            addresses::is_default.desc(),
            addresses::created_at,
            addresses::id,
        ))
        .select(Address::as_select())
        .load(conn)
        .await
}

pub async fn get(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    id: &str,
) -> Result<Address, AuthError> {
    addresses::table
        .find(id)
        .filter(addresses::client_id.eq(client_id))
        .select(Address::as_select())
        .first(conn)
        .await
        .optional()?
        .ok_or_else(|| AddressRefusal::NotFound.into())
}

/// Where a write goes.
pub enum Target<'k> {
    /// A new address, if the book has room for it ([`MAX_ADDRESSES`]).
    New,
    /// The client's address named by the key; another client's is not found.
    Existing(&'k AddressKey),
}

/// Creates or changes an address and reads it back, in one transaction with the owner locked
/// (see [`lock_owner`]), so that the count of a full book and the one default hold.
pub async fn save(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    target: Target<'_>,
    fields: AddressFields,
) -> Result<Address, AuthError> {
    conn.transaction(async |conn| {
        lock_owner(conn, client_id).await?;
        let id = match target {
            Target::New => insert(conn, client_id, &fields).await?,
            Target::Existing(key) => own_id(conn, client_id, key).await?,
        };
        // The optional fields and the default flag go through the same changeset for both.
        write_fields(conn, client_id, &id, &fields).await
    })
    .await
}

/// Inserts a new address with the required fields, if the book has room; its id.
async fn insert(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    fields: &AddressFields,
) -> Result<String, AuthError> {
    let saved: i64 = addresses::table
        .filter(addresses::client_id.eq(client_id))
        .count()
        .get_result(conn)
        .await?;
    if saved >= MAX_ADDRESSES {
        return Err(BookRefusal::Full.into());
    }
    let id = new_id();
    diesel::insert_into(addresses::table)
        .values((
            addresses::id.eq(&id),
            addresses::client_id.eq(client_id),
            addresses::label.eq(fields.label.clone().unwrap_or_default()),
            addresses::address_line.eq(fields.address_line.clone().unwrap_or_default()),
            addresses::city.eq(fields.city.clone().unwrap_or_default()),
            addresses::latitude.eq(fields.latitude.unwrap_or_default()),
            addresses::longitude.eq(fields.longitude.unwrap_or_default()),
        ))
        .execute(conn)
        .await?;
    Ok(id)
}

/// The id of the client's address named by `key`.
async fn own_id(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    key: &AddressKey,
) -> Result<String, AuthError> {
    let own = addresses::table
        .filter(addresses::client_id.eq(client_id))
        .select(addresses::id)
        .into_boxed();
    let own = match key {
        AddressKey::Id(id) => own.filter(addresses::id.eq(id)),
        AddressKey::Legacy(legacy) => own.filter(addresses::legacy_id.eq(legacy)),
    };
    own.first(conn)
        .await
        .optional()?
        .ok_or_else(|| AddressRefusal::NotFound.into())
}

pub async fn delete(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    id: &str,
) -> Result<(), AuthError> {
    let deleted = diesel::delete(
        addresses::table
            .find(id)
            .filter(addresses::client_id.eq(client_id)),
    )
    .execute(conn)
    .await?;
    if deleted == 0 {
        Err(AddressRefusal::NotFound.into())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
