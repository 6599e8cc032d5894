//! The service a route's path names: its id read from the path, then its row (read, or
//! locked for a write).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Deserialize;

use catalog_db::ServiceRow;
use catalog_db::schema::services;

use crate::error::OpError;

envelope::refusals! {
    /// Why the service a path names is not there.
    pub enum ServiceRefusal in Operator {
        /// The path id is not an integer (the wording of NestJS's integer pipe).
        BadId => 400, "Validation failed (numeric string is expected)";
        /// No service has the id; the order service sends the same words in its envelope.
        NotFound => 404, [catalog_db::SERVICE_NOT_FOUND];
    }
}

/// The path's service id, read as text so that a non-integer is refused in the service's
/// words ([`ServicePath::id`]).
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ServicePath {
    /// The service id: an integer (anything else is refused with 400).
    #[param(value_type = i64, example = 1)]
    id: String,
}

impl ServicePath {
    /// The id, or [`ServiceRefusal::BadId`].
    pub fn id(&self) -> Result<i64, ServiceRefusal> {
        self.id.parse().map_err(|_| ServiceRefusal::BadId)
    }
}

/// The service, or [`ServiceRefusal::NotFound`].
pub async fn find(conn: &mut AsyncPgConnection, id: i64) -> Result<ServiceRow, OpError> {
    ServiceRow::find(conn, id)
        .await?
        .ok_or_else(|| ServiceRefusal::NotFound.into())
}

/// The service locked for the rest of the transaction, or [`ServiceRefusal::NotFound`].
pub async fn lock(conn: &mut AsyncPgConnection, id: i64) -> Result<ServiceRow, OpError> {
    services::table
        .find(id)
        .select(ServiceRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?
        .ok_or_else(|| ServiceRefusal::NotFound.into())
}
