//! The operator routes, one function each, by route group. Every route takes the operator
//! first (401 before anything else), then checks its role (403).

pub mod audit;
pub mod children;
pub mod clients;
pub mod earn_rates;
pub mod expiry_policy;
pub mod gift_codes;
pub mod occasions;
pub mod offers;
pub mod services;

use serde_json::Value;

/// The page a back-office list asks its keeper for: the panel's `page` and `limit`, read by
/// the rules of every operator list (`query::Page`), sent on as integers and nothing else.
fn paging(req: &actix_web::HttpRequest) -> back_office::paging::Paging {
    let page = crate::query::Params::parse(req.query_string()).page();
    back_office::paging::Paging::new(page.page, page.limit)
}

/// A raw body as JSON; unreadable is null, which the body rules refuse in their words.
fn json_body(raw: &[u8]) -> Value {
    serde_json::from_slice(raw).unwrap_or(Value::Null)
}
