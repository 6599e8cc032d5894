//! `GET /stores/{id}`, `GET /stores?merchantId=`, and
//! `GET /banners/merchant/{merchantId}/nearest-store?latitude=&longitude=`. No token.

use actix_web::{HttpResponse, web};
use envelope::Refuses;
use serde::Deserialize;

use super::Listed;

use crate::error::{DatabaseAnswers, OrderError, QueryRefusal};
use crate::state::AppState;
use crate::stores::{BranchesAsked, BranchesRefusal, Store, StoreRefusal};
use crate::{nearest, stores};

/// `{"store_id": 10}` or `{"store_id": null}`.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct NearestStore {
    #[schema(required)]
    store_id: Option<i64>,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct StorePath {
    /// A store id (a store banner's `merchant_id`, or nearest store's `store_id`).
    #[param(value_type = i64)]
    id: String,
}

/// One store's detail
///
/// No token. An id that is not an integer is answered like an unknown store, without asking
/// the database.
#[utoipa::path(get, path = "/stores/{id}", params(StorePath),
    responses(DatabaseAnswers, StoreRefusal, (status = 200, body = Store)))]
pub async fn get_store(
    state: web::Data<AppState>,
    path: web::Path<StorePath>,
) -> Result<HttpResponse, OrderError> {
    let store = match path.id.parse::<i64>() {
        Ok(id) => {
            let mut conn = state.pool.get().await?;
            stores::find_active(&mut conn, id).await?
        }
        // Not an integer: no store has that id, and the database is not asked.
        Err(_) => None,
    };
    let store = store.ok_or(StoreRefusal::UnknownStore)?;
    Ok(HttpResponse::Ok().json(store))
}

/// The query as sent: each value is read by its rule (`BranchesAsked::read`).
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BranchesQuery {
    /// The brand (collection) id, as store detail's `merchant_id`; trimmed.
    #[serde(rename = "merchantId")]
    #[param(value_type = i64, required)]
    merchant_id: Option<String>,
    /// The page, from 1 (default 1).
    #[param(value_type = Option<i64>, minimum = 1, maximum = 1000)]
    page: Option<String>,
    /// Stores per page (default and at most 100).
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100)]
    limit: Option<String>,
}

/// A brand's branches
///
/// One page at a time (a brand may have thousands): `limit` stores (default and at most 100)
/// from page `page` (default 1, at most 1000), by id. A page shorter than `limit` is the last.
/// No token. The 200 is `{data: [stores]}`: one page of the brand's active stores by id,
/// possibly empty.
#[utoipa::path(get, path = "/stores", params(BranchesQuery),
    responses(DatabaseAnswers, Refuses<(BranchesRefusal, QueryRefusal)>,
        (status = 200, body = Listed<Store>)))]
pub async fn list_branches(
    state: web::Data<AppState>,
    query: web::Query<BranchesQuery>,
) -> Result<HttpResponse, OrderError> {
    let asked = BranchesAsked::read(
        query.merchant_id.as_deref(),
        query.page.as_deref(),
        query.limit.as_deref(),
    )?;
    let mut conn = state.pool.get().await?;
    let page = stores::branches(&mut conn, asked).await?;
    Ok(HttpResponse::Ok().json(Listed { data: page }))
}

/// The nearest-store route's path and query, as its document shows them: the handler reads
/// each value itself, so that one it cannot read is a null answer, never a 400.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct NearestPath {
    /// The banner's `nearest_branch_merchant_id`.
    #[param(value_type = i64)]
    merchant_id: String,
}

#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct NearestQuery {
    /// -90 to 90; else null.
    latitude: Option<f64>,
    /// -180 to 180; else null.
    longitude: Option<f64>,
}

/// The nearest branch of a brand
///
/// Which branch of a brand a customer should land on. No token. Candidates are the brand's
/// stores with management status `active` and a real location ((0, 0) counts as none). A
/// store is operational when `is_online` is true (null is offline) and
/// `store_disabled_ordering` is false. The nearest operational candidate within 12 km wins,
/// even over a closer non-operational one; otherwise the nearest candidate at any distance,
/// online or not; ties go to the lower store id. Clients: call when a banner becomes visible,
/// with a timeout of about 1.5 s, and treat a timeout as null.
///
/// `merchant_id` is the banner's `nearest_branch_merchant_id` (the real merchant id; the spec
/// calls it merchantId); `latitude` and `longitude` are the customer's, in decimal degrees.
/// Always 200: `{"store_id": <id>}`, or `{"store_id": null}` for an unknown or unreadable
/// merchant, no candidate, missing or unreadable coordinates or an internal failure (logged
/// at error level), identical on purpose; the client treats null as a no-op tap.
#[utoipa::path(get, path = "/banners/merchant/{merchant_id}/nearest-store",
    params(NearestPath, NearestQuery),
    responses((status = 200, body = NearestStore)))]
pub async fn find_nearest_store(
    state: web::Data<AppState>,
    path: web::Path<NearestPath>,
    // Pairs, not a struct: a parameter sent twice must not turn into a 400 (docs/design.md: the
    // answer is always 200); the first value counts.
    query: web::Query<Vec<(String, String)>>,
) -> HttpResponse {
    let first = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let store_id = async {
        let merchant_id = path.merchant_id.parse::<i64>().ok()?;
        let (latitude, longitude) = nearest::coordinates(first("latitude"), first("longitude"))?;
        match state.branches.get(&state.pool, merchant_id).await {
            Ok(index) => index.nearest(latitude, longitude),
            Err(e) => {
                tracing::error!(
                    error.message = %e,
                    merchant.id = merchant_id,
                    "nearest store failed; answering null"
                );
                None
            }
        }
    }
    .await;
    HttpResponse::Ok().json(NearestStore { store_id })
}
