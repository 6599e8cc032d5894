//! The 13-field client profile, always in the spec's key order.

use chrono::NaiveDate;
use diesel::prelude::*;
use serde::Serialize;

use crate::db::schema::clients;

envelope::refusals! {
    /// Why a client asked for by id or by phone is not answered.
    pub enum ClientRefusal in A {
        /// No client has this id (the internal route) or this phone (the lookup).
        Unknown => 404, "client not found";
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Queryable, Selectable, utoipa::ToSchema)]
#[diesel(table_name = clients)]
pub struct Profile {
    pub client_id: i64,
    pub odoo_id: String,
    pub contact_phone: String,
    pub status: String,
    #[schema(required)]
    pub email_address: Option<String>,
    #[schema(required)]
    pub first_name: Option<String>,
    #[schema(required)]
    pub last_name: Option<String>,
    pub sex: i16,
    /// `YYYY-MM-DD`.
    #[schema(required, value_type = Option<String>, format = Date)]
    pub birth_date: Option<NaiveDate>,
    pub receive_offers: i16,
    pub push_enabled: i16,
    pub is_food_truck_user: i16,
    pub is_cod_disabled: i16,
}

impl Profile {
    pub fn is_active(&self) -> bool {
        self.status == "active"
    }
}

/// The answer of a route that gives the bare profile, as the document shows it.
#[derive(utoipa::IntoResponses)]
#[response(status = 200, description = "the bare 13-field profile")]
#[allow(dead_code)]
pub struct ProfileAnswer(Profile);

/// What the client lookup by phone shows of another client: enough to address a gift,
/// never its contact details, birth date or settings. Keys in this order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Queryable, Selectable, utoipa::ToSchema)]
#[diesel(table_name = clients)]
pub struct Recipient {
    #[schema(example = 1002)]
    pub client_id: i64,
    #[schema(required, example = "Omar")]
    pub first_name: Option<String>,
    #[schema(required, example = "Saleh")]
    pub last_name: Option<String>,
}

/// The answer wrapper of the auth routes that are not bare: `{status, data}`, `status` the
/// HTTP status again (200, or 201 for a new address).
#[derive(Serialize, utoipa::ToSchema)]
pub struct Wrapped<T: Serialize> {
    /// The HTTP status again (200, or 201 for a new address).
    pub status: u16,
    pub data: T,
}

impl<T: Serialize> Wrapped<T> {
    pub fn ok(data: T) -> Self {
        Self { status: 200, data }
    }
}
