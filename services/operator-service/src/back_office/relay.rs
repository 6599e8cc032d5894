//! The one handler of every back-office route. Checks here, in order: the token (401, the
//! `Operator` extractor), a body's size (413), the role the route admits (403), the path's
//! id (404 unless it is what the route's rule says: it becomes part of the keeper's path);
//! then the keeper checks the body and the data, and its refusals pass on unchanged.

use actix_web::{HttpRequest, HttpResponse, web};
use back_office::paging::Paging;
use back_office::routes::{IdText, Keeper, Query, Route};
use utoipa::openapi::path::HttpMethod;

use crate::auth::{AccessRefusal, Operator};
use crate::error::OpError;
use crate::state::AppState;

pub async fn relay(
    route: Route,
    operator: Operator,
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Option<web::Bytes>,
) -> Result<HttpResponse, OpError> {
    let rule = route.rule();
    if !rule.admits.admits(operator.role) {
        return Err(AccessRefusal::NotAdmin.into());
    }
    let id = match rule.id {
        Some(id) => Some(id.read(&IdText::of(&req)).map_err(OpError::Refused)?),
        None => None,
    };
    let mut path = route.keeper_path(id.as_deref());
    path.push_str(&query(rule.query, req.query_string()));
    let keeper = match rule.keeper {
        Keeper::PointService => &state.point_service,
        Keeper::OrderService => &state.order_service,
    };
    let named = rule.names_operator.then_some(&operator);
    keeper.relay(method(route), &path, named, body).await
}

/// The query the keeper gets, with its `?`.
fn query(query: Query, sent: &str) -> String {
    match query {
        Query::None => String::new(),
        Query::Page => {
            let page = crate::query::Params::parse(sent).page();
            Paging::new(page.page, page.limit).query()
        }
        // Only the two keys the point service reads go on, re-encoded.
        Query::History => {
            let pairs = url::form_urlencoded::parse(sent.as_bytes())
                .filter(|(key, _)| key == "page" || key == "limit");
            let query = url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(pairs)
                .finish();
            format!("?{query}")
        }
    }
}

fn method(route: Route) -> reqwest::Method {
    match route.contract().method {
        HttpMethod::Get => reqwest::Method::GET,
        HttpMethod::Post => reqwest::Method::POST,
        HttpMethod::Put => reqwest::Method::PUT,
        HttpMethod::Patch => reqwest::Method::PATCH,
        HttpMethod::Delete => reqwest::Method::DELETE,
        HttpMethod::Options => reqwest::Method::OPTIONS,
        HttpMethod::Head => reqwest::Method::HEAD,
        HttpMethod::Trace => reqwest::Method::TRACE,
    }
}
