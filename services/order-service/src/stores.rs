//! Stores: one store's detail and a brand's branches (the nearest branch is in
//! [`crate::nearest`]).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Serialize;

use catalog_db::schema::stores;

/// A store, in this key order.
#[derive(Debug, Clone, Serialize, Queryable, Selectable, utoipa::ToSchema)]
#[diesel(table_name = stores)]
pub struct Store {
    /// The store id (a store banner's `merchant_id`, or nearest store's `store_id`).
    pub id: i64,
    /// The store's collection (brand) id.
    pub merchant_id: i64,
    pub name: String,
    #[schema(required)]
    pub latitude: Option<f64>,
    #[schema(required)]
    pub longitude: Option<f64>,
    /// Always `active` here (inactive stores are not served).
    pub management_status: String,
    /// Null counts as offline.
    #[schema(required)]
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

/// The most branches one answer holds (and the default page size): a big brand has
/// thousands, and the whole list in one answer would grow with it.
pub const PAGE_SIZE: i64 = 100;
/// The last page asked for: with [`PAGE_SIZE`], 100 000 branches, far past any brand, and a
/// bound on how far the database skips.
pub const MAX_PAGE: i64 = 1000;

/// One page (from 1) of a brand's active stores, by id.
pub async fn branches(
    conn: &mut AsyncPgConnection,
    merchant_id: i64,
    page: i64,
    limit: i64,
) -> QueryResult<Vec<Store>> {
    stores::table
        .filter(
            stores::merchant_id
                .eq(merchant_id)
                .and(stores::management_status.eq("active")),
        )
        .order(stores::id)
        .limit(limit)
        .offset((page - 1) * limit)
        .select(Store::as_select())
        .load(conn)
        .await
}
