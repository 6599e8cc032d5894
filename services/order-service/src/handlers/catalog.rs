//! `GET /system_configs/point_rates`, `GET /system-categories`, `GET /system-categories/{id}`,
//! `GET /system-categories/{id}/children`. No token.

use std::sync::Arc;

use actix_web::{HttpResponse, web};
use serde::Deserialize;
use serde_json::json;

use crate::catalog::{self, ServiceDetail};
use crate::error::OrderError;
use crate::point_rates;
use crate::state::AppState;

const NOT_FOUND: &str = "Service is not found";

pub async fn point_rates(state: web::Data<AppState>) -> Result<HttpResponse, OrderError> {
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(point_rates::rates(&mut conn).await?))
}

#[derive(Deserialize)]
pub struct LanguageQuery {
    language: Option<String>,
}

fn service_id(raw: &str) -> Result<i64, OrderError> {
    raw.parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or(OrderError::NotFound(NOT_FOUND))
}

pub async fn home(
    state: web::Data<AppState>,
    query: web::Query<LanguageQuery>,
) -> Result<HttpResponse, OrderError> {
    let english = catalog::wants_english(query.language.as_deref());
    let mut conn = state.pool.get().await?;
    let rows = catalog::home(&mut conn).await?;
    Ok(HttpResponse::Ok()
        .json(json!({"data": rows.iter().map(|r| r.item(english)).collect::<Vec<_>>()})))
}

pub async fn detail(
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<LanguageQuery>,
) -> Result<HttpResponse, OrderError> {
    let id = service_id(&path)?;
    let english = catalog::wants_english(query.language.as_deref());
    let mut conn = state.pool.get().await?;
    let row = catalog::find(&mut conn, id)
        .await?
        .ok_or(OrderError::NotFound(NOT_FOUND))?;
    Ok(HttpResponse::Ok().json(ServiceDetail {
        item: row.item(english),
        logo: row.logo.clone(),
    }))
}

pub async fn children(
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<LanguageQuery>,
) -> Result<HttpResponse, OrderError> {
    let id = service_id(&path)?;
    let english = catalog::wants_english(query.language.as_deref());
    let key = (id, english);
    let cached = match state.children.get(&key).await {
        Some(hit) => hit,
        None => {
            let mut conn = state.pool.get().await?;
            let fresh = Arc::new(catalog::children(&mut conn, id, english).await?);
            state.children.insert(key, fresh.clone()).await;
            fresh
        }
    };
    match cached.as_ref() {
        Some(items) => Ok(HttpResponse::Ok().json(json!({"data": items}))),
        None => Err(OrderError::NotFound(NOT_FOUND)),
    }
}
