//! `GET /stores/{id}`, `GET /stores?merchantId=`, and
//! `GET /banners/merchant/{merchantId}/nearest-store?latitude=&longitude=`. No token.

use actix_web::{HttpResponse, web};
use serde::Deserialize;
use serde_json::json;

use crate::error::OrderError;
use crate::state::AppState;
use crate::stores;

pub async fn store(
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, OrderError> {
    let id = path
        .parse::<i64>()
        .map_err(|_| OrderError::NotFound("Store not found"))?;
    let mut conn = state.pool.get().await?;
    let store = stores::find_active(&mut conn, id)
        .await?
        .ok_or(OrderError::NotFound("Store not found"))?;
    Ok(HttpResponse::Ok().json(store))
}

#[derive(Deserialize)]
pub struct BranchesQuery {
    #[serde(rename = "merchantId")]
    merchant_id: Option<String>,
}

pub async fn branches(
    state: web::Data<AppState>,
    query: web::Query<BranchesQuery>,
) -> Result<HttpResponse, OrderError> {
    let merchant_id = query
        .merchant_id
        .as_deref()
        .and_then(|m| m.trim().parse::<i64>().ok())
        .ok_or_else(|| OrderError::Invalid("merchantId must be an integer".into()))?;
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(json!({"data": stores::branches(&mut conn, merchant_id).await?})))
}

#[derive(Deserialize)]
pub struct NearestQuery {
    latitude: Option<String>,
    longitude: Option<String>,
}

/// Always 200: `{"store_id": <id>}` or `{"store_id": null}` — unknown merchant, no
/// candidate, unreadable coordinates and internal failures all look the same on purpose.
pub async fn nearest(
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<NearestQuery>,
) -> HttpResponse {
    let store_id = async {
        let merchant_id = path.parse::<i64>().ok()?;
        let (latitude, longitude) = stores::coordinates(query.latitude.as_deref(), query.longitude.as_deref())?;
        let candidates = match state.pool.get().await {
            Ok(mut conn) => stores::candidates(&mut conn, merchant_id).await,
            Err(e) => Err(diesel::result::Error::QueryBuilderError(e.to_string().into())),
        };
        match candidates {
            Ok(candidates) => stores::nearest(&candidates, latitude, longitude),
            Err(e) => {
                tracing::error!(error.message = %e, merchant.id = merchant_id, "nearest store failed; answering null");
                None
            }
        }
    }
    .await;
    HttpResponse::Ok().json(json!({"store_id": store_id}))
}
