//! `GET /system-categories`, `GET /system-categories/{id}`, `GET /system-categories/{id}/children`.
//! No token.

use std::sync::Arc;

use actix_web::{HttpResponse, web};
use serde::Deserialize;

use catalog_db::ServiceRow;

use super::Listed;

use crate::error::{INTERNAL_500, OrderError};
use crate::state::AppState;
use crate::system_categories::{self, ServiceDetail, ServiceItem};

const NOT_FOUND: &str = "Service is not found";

#[derive(Deserialize)]
pub struct LanguageQuery {
    language: Option<String>,
}

envelope::answer_set! {
    /// What the three routes answer besides their own answers: the database's 500 and 503 (as
    /// [`crate::error::DatabaseAnswers`]), and the 400 of a query that cannot be read into a
    /// [`LanguageQuery`].
    pub LanguageAnswers, envelope::Envelope::C, {
        "400" => "`Invalid query: Query deserialize error: duplicate field ...` when `language` is sent twice (the query cannot be read)",
        "500" => INTERNAL_500,
        "503" => db::BUSY_ANSWER,
    }
}

fn service_id(raw: &str) -> Result<i64, OrderError> {
    raw.parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or(OrderError::NotFound(NOT_FOUND))
}

#[utoipa::path(get, path = "/system-categories", tag = "services",
    summary = "The home list of services",
    description = "The home list: active services that are not children, by `ordering`, then id. No token.",
    params(("language" = Option<String>, Query, description = "exactly `en-GB` serves `image_en`/`thumbnail_en` when they are set; anything else (or none) the Arabic artwork")),
    responses(LanguageAnswers, (status = 200, description = "`{data: [client service items]}`", body = Listed<crate::system_categories::ServiceItem>)))]
pub async fn home(
    state: web::Data<AppState>,
    query: web::Query<LanguageQuery>,
) -> Result<HttpResponse, OrderError> {
    let english = system_categories::wants_english(query.language.as_deref());
    let mut conn = state.pool.get().await?;
    let data = system_categories::home(&mut conn, english).await?;
    Ok(HttpResponse::Ok().json(Listed { data }))
}

#[utoipa::path(get, path = "/system-categories/{id}", tag = "services",
    summary = "One service's detail",
    description = "One service's detail, whatever its status or role. No token.",
    params(("id" = String, Path, description = "the service id: a positive integer; anything else is 404", example = "1"), ("language" = Option<String>, Query, description = "exactly `en-GB` serves `image_en`/`thumbnail_en` when they are set; anything else (or none) the Arabic artwork")),
    responses(LanguageAnswers, (status = 200, description = "the ten fields of a client service item, then `logo`", body = ServiceDetail),
        (status = 404, description = "`Service is not found`: unknown id, or an id that is not a positive integer", body = envelope::ErrorC)))]
pub async fn detail(
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<LanguageQuery>,
) -> Result<HttpResponse, OrderError> {
    let id = service_id(&path)?;
    let english = system_categories::wants_english(query.language.as_deref());
    let mut conn = state.pool.get().await?;
    let row = ServiceRow::find(&mut conn, id)
        .await?
        .ok_or(OrderError::NotFound(NOT_FOUND))?;
    Ok(HttpResponse::Ok().json(ServiceDetail {
        item: ServiceItem::of(&row, english),
        logo: row.logo.clone(),
    }))
}

#[utoipa::path(get, path = "/system-categories/{id}/children", tag = "services",
    summary = "A service's children",
    description = "A service's children, for the client's choice between a child list and the store screen: show the children when `data` is non-empty. No token. Each replica keeps an answer (a list, or the 404) for 30 seconds per service id and language choice, so it may lag an operator's change by that long.",
    params(("id" = String, Path, description = "the service id: a positive integer; anything else is 404", example = "1"), ("language" = Option<String>, Query, description = "exactly `en-GB` serves `image_en`/`thumbnail_en` when they are set; anything else (or none) the Arabic artwork")),
    responses(LanguageAnswers, (status = 200, description = "`{data: [client service items]}`: the service's active children in display order (`ordering`, then id); `[]` when it has none; never paginated, no metadata block", body = Listed<crate::system_categories::ServiceItem>),
        (status = 404, description = "`Service is not found`: the service does not exist, or the id is not a positive integer", body = envelope::ErrorC)))]
pub async fn children(
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<LanguageQuery>,
) -> Result<HttpResponse, OrderError> {
    let id = service_id(&path)?;
    let english = system_categories::wants_english(query.language.as_deref());
    let key = (id, english);
    let cached = match state.children.get(&key).await {
        Some(hit) => hit,
        None => {
            let mut conn = state.pool.get().await?;
            let fresh = Arc::new(system_categories::children(&mut conn, id, english).await?);
            state.children.insert(key, fresh.clone()).await;
            fresh
        }
    };
    match cached.as_ref() {
        Some(items) => Ok(HttpResponse::Ok().json(Listed {
            data: items.clone(),
        })),
        None => Err(OrderError::NotFound(NOT_FOUND)),
    }
}
