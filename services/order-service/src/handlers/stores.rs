//! `GET /stores/{id}`, `GET /stores?merchantId=`, and
//! `GET /banners/merchant/{merchantId}/nearest-store?latitude=&longitude=`. No token.

use actix_web::{HttpResponse, web};
use serde::Deserialize;

use super::Listed;

use crate::error::{DatabaseAnswers, OrderError};
use crate::state::AppState;
use crate::{nearest, stores};

/// `{"store_id": 10}` or `{"store_id": null}`.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct NearestStore {
    #[schema(required)]
    store_id: Option<i64>,
}

#[utoipa::path(get, path = "/stores/{id}", tag = "stores",
    summary = "One store's detail",
    description = "One store's detail. No token.",
    params(("id" = i64, Path, description = "a store id (a store banner's `merchant_id`, or nearest store's `store_id`)")),
    responses(DatabaseAnswers, (status = 200, description = "the store; `merchant_id` is its collection (brand) id", body = crate::stores::Store),
        (status = 404, description = "`Store not found`: unknown or inactive store, or an id that is not an integer", body = envelope::ErrorC)))]
pub async fn store(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, OrderError> {
    let store = match path.parse::<i64>() {
        Ok(id) => {
            let mut conn = state.pool.get().await?;
            stores::find_active(&mut conn, id).await?
        }
        // Not an integer: no store has that id, and the database is not asked.
        Err(_) => None,
    };
    let store = store.ok_or(OrderError::NotFound("Store not found"))?;
    Ok(HttpResponse::Ok().json(store))
}

#[derive(Deserialize)]
pub struct BranchesQuery {
    #[serde(rename = "merchantId")]
    merchant_id: Option<String>,
    page: Option<String>,
    limit: Option<String>,
}

/// A query number in `range`, `default` when absent, else the 400 `message`.
fn number_in(
    raw: Option<&str>,
    default: i64,
    range: std::ops::RangeInclusive<i64>,
    message: &str,
) -> Result<i64, OrderError> {
    match raw {
        None => Ok(default),
        Some(raw) => raw
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|n| range.contains(n))
            .ok_or_else(|| OrderError::Invalid(message.into())),
    }
}

#[utoipa::path(get, path = "/stores", tag = "stores",
    summary = "A brand's branches",
    description = "A brand's branches, one page at a time (a brand may have thousands): `limit` stores (default and at most 100) from page `page` (default 1, at most 1000), by id. A page shorter than `limit` is the last. No token.",
    params(("merchantId" = i64, Query, description = "the brand (collection) id, as store detail's `merchant_id`; trimmed"),
        ("page" = Option<i64>, Query, minimum = 1, maximum = 1000, description = "the page, from 1 (default 1)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 100, description = "stores per page (default and at most 100)")),
    responses(DatabaseAnswers, (status = 200, description = "`{data: [stores]}`: one page of the brand's active stores by id, possibly empty", body = Listed<crate::stores::Store>),
        (status = 400, description = "`merchantId must be an integer`: missing or not an integer; `page must be an integer from 1 to 1000`; `limit must be an integer from 1 to 100`; `Invalid query: Query deserialize error: duplicate field ...` when a key is sent twice", body = envelope::ErrorC)))]
pub async fn branches(
    state: web::Data<AppState>,
    query: web::Query<BranchesQuery>,
) -> Result<HttpResponse, OrderError> {
    let merchant_id = query
        .merchant_id
        .as_deref()
        .and_then(|m| m.trim().parse::<i64>().ok())
        .ok_or_else(|| OrderError::Invalid("merchantId must be an integer".into()))?;
    let page = number_in(
        query.page.as_deref(),
        1,
        1..=stores::MAX_PAGE,
        "page must be an integer from 1 to 1000",
    )?;
    let limit = number_in(
        query.limit.as_deref(),
        stores::PAGE_SIZE,
        1..=stores::PAGE_SIZE,
        "limit must be an integer from 1 to 100",
    )?;
    let mut conn = state.pool.get().await?;
    let page = stores::branches(&mut conn, merchant_id, page, limit).await?;
    Ok(HttpResponse::Ok().json(Listed { data: page }))
}

/// Always 200: `{"store_id": <id>}` or `{"store_id": null}` — unknown merchant, no
/// candidate, unreadable coordinates and internal failures all look the same on purpose.
#[utoipa::path(get, path = "/banners/merchant/{merchant_id}/nearest-store", tag = "stores",
    summary = "The nearest branch of a brand",
    description = "Which branch of a brand a customer should land on. No token. Candidates are the brand's stores with management status `active` and a real location ((0, 0) counts as none). A store is operational when `is_online` is true (null is offline) and `store_disabled_ordering` is false. The nearest operational candidate within 12 km wins, even over a closer non-operational one; otherwise the nearest candidate at any distance, online or not; ties go to the lower store id. Clients: call when a banner becomes visible, with a timeout of about 1.5 s, and treat a timeout as null.",
    params(("merchant_id" = String, Path, description = "the banner's `nearest_branch_merchant_id` (the real merchant id; the spec calls it merchantId); an unreadable one answers null"),
        ("latitude" = Option<f64>, Query, description = "the customer's latitude in decimal degrees, -90 to 90; missing or unreadable answers null"),
        ("longitude" = Option<f64>, Query, description = "the customer's longitude in decimal degrees, -180 to 180; missing or unreadable answers null")),
    responses((status = 200, description = "`{\"store_id\": <id>}`, or `{\"store_id\": null}` for an unknown merchant, no candidate, missing or unreadable coordinates or an internal failure (logged at error level) — identical on purpose; the client treats null as a no-op tap", body = NearestStore)))]
pub async fn nearest(
    state: web::Data<AppState>,
    path: web::Path<String>,
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
        let merchant_id = path.parse::<i64>().ok()?;
        let (latitude, longitude) = nearest::coordinates(first("latitude"), first("longitude"))?;
        match state.branches.get(&state.pool, merchant_id).await {
            Ok(index) => index.nearest(latitude, longitude),
            Err(e) => {
                tracing::error!(error.message = %e, merchant.id = merchant_id, "nearest store failed; answering null");
                None
            }
        }
    }
    .await;
    HttpResponse::Ok().json(NearestStore { store_id })
}
