//! `GET /system-categories`, `GET /system-categories/{id}`,
//! `GET /system-categories/{id}/children`. No token.

use std::sync::Arc;

use actix_web::{HttpResponse, web};
use serde::Deserialize;

use catalog_db::ServiceRow;

use super::Listed;

use crate::error::{OrderError, QueryRefusal, internal_500};
use crate::state::AppState;
use crate::system_categories::{self, ServiceDetail, ServiceItem, ServiceRefusal, service_id};

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LanguageQuery {
    /// Exactly `en-GB` serves `image_en`/`thumbnail_en` when they are set; anything else (or
    /// none) the Arabic artwork.
    language: Option<String>,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ServicePath {
    /// The service id: a positive integer; anything else is 404.
    #[param(value_type = i64, example = 1)]
    id: String,
}

/// The service a `/system-categories/{id}…` route names and whether it asks for the English
/// artwork: the detail and the children read their request alike, the id first (an id that
/// is no service is 404 whatever the language).
fn service_and_language(
    path: &ServicePath,
    query: &LanguageQuery,
) -> Result<(i64, bool), ServiceRefusal> {
    let id = service_id(&path.id)?;
    let english = system_categories::wants_english(query.language.as_deref());
    Ok((id, english))
}

envelope::answer_set! {
    /// What the three routes answer besides their own answers: the database's 500 and 503 (as
    /// [`crate::error::DatabaseAnswers`]), and the 400 of a query that cannot be read into a
    /// [`LanguageQuery`] ([`QueryRefusal`]).
    pub LanguageAnswers, envelope::Envelope::C, {
        "400" => format!(
            "`{}` when `language` is sent twice (the query cannot be read)",
            QueryRefusal::KeySentTwice
        ),
        "500" => internal_500(),
        "503" => db::BUSY_ANSWER,
    }
}

/// The home list of services
///
/// Active services that are not children, by `ordering`, then id. No token.
#[utoipa::path(get, path = "/system-categories", params(LanguageQuery),
    responses(
        (status = 200, description = "`{data: [client service items]}`", body = Listed<ServiceItem>)))]
pub async fn list_home_services(
    state: web::Data<AppState>,
    query: web::Query<LanguageQuery>,
) -> Result<HttpResponse, OrderError> {
    let english = system_categories::wants_english(query.language.as_deref());
    let mut conn = state.pool.get().await?;
    let data = system_categories::home(&mut conn, english).await?;
    Ok(HttpResponse::Ok().json(Listed { data }))
}

/// One service's detail
///
/// Whatever its status or role: the ten fields of a client service item, then `logo`. No
/// token.
#[utoipa::path(get, path = "/system-categories/{id}", params(ServicePath, LanguageQuery),
    responses( ServiceRefusal, (status = 200, body = ServiceDetail)))]
pub async fn get_service(
    state: web::Data<AppState>,
    path: web::Path<ServicePath>,
    query: web::Query<LanguageQuery>,
) -> Result<HttpResponse, OrderError> {
    let (id, english) = service_and_language(&path, &query)?;
    let mut conn = state.pool.get().await?;
    let row = ServiceRow::find(&mut conn, id)
        .await?
        .ok_or(ServiceRefusal::UnknownService)?;
    Ok(HttpResponse::Ok().json(ServiceDetail {
        item: ServiceItem::of(&row, english),
        logo: row.logo.clone(),
    }))
}

/// A service's children
///
/// For the client's choice between a child list and the store screen: show the children when
/// `data` is non-empty. The 200 is `{data: [client service items]}`: the service's active
/// children in display order (`ordering`, then id); `[]` when it has none; never paginated,
/// no metadata block. No token. Each replica keeps an answer (a list, or the 404) for 30
/// seconds per service id and language choice, so it may lag an operator's change by that
/// long.
#[utoipa::path(get, path = "/system-categories/{id}/children",
    params(ServicePath, LanguageQuery), responses( ServiceRefusal,
        (status = 200, description = "`{data: [client service items]}`", body = Listed<ServiceItem>)))]
pub async fn list_child_services(
    state: web::Data<AppState>,
    path: web::Path<ServicePath>,
    query: web::Query<LanguageQuery>,
) -> Result<HttpResponse, OrderError> {
    let (id, english) = service_and_language(&path, &query)?;
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
        None => Err(ServiceRefusal::UnknownService.into()),
    }
}
