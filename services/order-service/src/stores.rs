//! Stores: one store's detail and a brand's branches (the nearest branch is in
//! [`crate::nearest`]).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;

use catalog::schema::stores;

#[derive(Debug, Clone, Serialize, Queryable, Selectable)]
#[diesel(table_name = stores)]
pub struct Store {
    pub id: i64,
    /// The store's collection (brand) id.
    pub merchant_id: i64,
    pub name: String,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    pub management_status: String,
    pub is_online: Option<bool>,
    pub store_disabled_ordering: bool,
}

/// An active store, or `None` for an unknown or inactive one.
pub async fn find_active(conn: &mut AsyncPgConnection, id: i64) -> QueryResult<Option<Store>> {
    stores::table
        .find(id)
        .filter(stores::management_status.eq("active"))
        .select(Store::as_select())
        .first(conn)
        .await
        .optional()
}

/// A brand's active stores, by id.
pub async fn branches(conn: &mut AsyncPgConnection, merchant_id: i64) -> QueryResult<Vec<Store>> {
    stores::table
        .filter(
            stores::merchant_id
                .eq(merchant_id)
                .and(stores::management_status.eq("active")),
        )
        .order(stores::id)
        .select(Store::as_select())
        .load(conn)
        .await
}
