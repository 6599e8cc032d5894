//! Stores: one store's detail and a brand's branches (the nearest branch is in
//! [`crate::nearest`]).

use std::ops::RangeInclusive;

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

envelope::refusals! {
    /// Why a store's detail is refused.
    pub enum StoreRefusal in C {
        /// An unknown or inactive store, or an id that is not an integer.
        UnknownStore => 404, "Store not found";
    }
}

envelope::refusals! {
    /// Why a brand's branches are refused: a query value out of its rule.
    pub enum BranchesRefusal in C {
        /// `merchantId` missing or not an integer (once trimmed).
        BadMerchantId => 400, "merchantId must be an integer";
        /// `page` not an integer from 1 to [`MAX_PAGE`].
        BadPage => 400, "page must be an integer from 1 to 1000";
        /// `limit` not an integer from 1 to [`PAGE_SIZE`].
        BadLimit => 400, "limit must be an integer from 1 to 100";
    }
}

/// The most branches one answer holds (and the default page size): a big brand has
/// thousands, and the whole list in one answer would grow with it.
pub const PAGE_SIZE: i64 = 100;
/// The last page asked for: with [`PAGE_SIZE`], 100 000 branches, far past any brand, and a
/// bound on how far the database skips.
pub const MAX_PAGE: i64 = 1000;

/// A brand's branches as asked for: the brand, the page (from 1) and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchesAsked {
    pub merchant_id: i64,
    pub page: i64,
    pub limit: i64,
}

impl BranchesAsked {
    /// Reads the query's values (each trimmed): `merchantId` is required; `page` defaults to 1
    /// and `limit` to [`PAGE_SIZE`], their bounds.
    pub fn read(
        merchant_id: Option<&str>,
        page: Option<&str>,
        limit: Option<&str>,
    ) -> Result<Self, BranchesRefusal> {
        let merchant_id = merchant_id
            .and_then(|m| m.trim().parse::<i64>().ok())
            .ok_or(BranchesRefusal::BadMerchantId)?;
        let page = number_in(page, 1, 1..=MAX_PAGE).ok_or(BranchesRefusal::BadPage)?;
        let limit = number_in(limit, PAGE_SIZE, 1..=PAGE_SIZE).ok_or(BranchesRefusal::BadLimit)?;
        Ok(Self {
            merchant_id,
            page,
            limit,
        })
    }
}

/// A query number in `range`, `default` when absent; `None` when out of it or unreadable.
fn number_in(raw: Option<&str>, default: i64, range: RangeInclusive<i64>) -> Option<i64> {
    match raw {
        None => Some(default),
        Some(raw) => raw.trim().parse::<i64>().ok().filter(|n| range.contains(n)),
    }
}

/// One page (from 1) of a brand's active stores, by id.
pub async fn branches(
    conn: &mut AsyncPgConnection,
    BranchesAsked {
        merchant_id,
        page,
        limit,
    }: BranchesAsked,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusals_name_the_bounds_the_rules_apply() {
        let page = format!("from 1 to {MAX_PAGE}");
        let limit = format!("from 1 to {PAGE_SIZE}");
        assert!(BranchesRefusal::BadPage.to_string().ends_with(&page));
        assert!(BranchesRefusal::BadLimit.to_string().ends_with(&limit));
    }

    #[test]
    fn the_query_is_read_by_its_rules() {
        let asked = |m, p, l| BranchesAsked::read(m, p, l);
        assert_eq!(
            asked(Some(" 7 "), None, None),
            Ok(BranchesAsked {
                merchant_id: 7,
                page: 1,
                limit: PAGE_SIZE
            })
        );
        assert_eq!(asked(None, None, None), Err(BranchesRefusal::BadMerchantId));
        assert_eq!(
            asked(Some("7"), Some("0"), None),
            Err(BranchesRefusal::BadPage)
        );
        assert_eq!(
            asked(Some("7"), Some("1001"), None),
            Err(BranchesRefusal::BadPage)
        );
        assert_eq!(
            asked(Some("7"), Some("2"), Some("101")),
            Err(BranchesRefusal::BadLimit)
        );
    }
}
