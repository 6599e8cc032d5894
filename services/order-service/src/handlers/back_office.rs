//! The handlers of the loyalty back office's routes the table gives the order service
//! (`back_office::routes`), under `/internal/v1/back-office`: the operator service relays its
//! operator routes here once it has checked the operator's token and role. Checks, in order:
//! the caller and the operator named (`back_office::keeper`, before any handler), the body,
//! the batch. Every refusal is in the operator API's envelope, which the operator service
//! passes on unchanged.

use actix_web::{HttpResponse, web};
use back_office::audit::{Action, Page};
use back_office::earn_rates::RatesChange;
use back_office::gift_codes::{BatchFields, BatchList};
use back_office::keeper::{Acting, Caller};
use back_office::paging::Paging;
use back_office::routes::IdText;

use crate::back_office::gift_codes::{self, Issued};
use crate::back_office::{earn_rates, gift_code_export};
use crate::error::OrderError;
use crate::state::AppState;

/// An answer that holds codes: no cache keeps a copy of vouchers.
fn uncached() -> actix_web::HttpResponseBuilder {
    let mut answer = HttpResponse::Ok();
    answer.insert_header(("cache-control", "no-store"));
    answer
}

/// The gift-code batches
///
/// A page of them, newest first, each with its codes counted by state.
pub async fn list_batches(
    state: web::Data<AppState>,
    _caller: Caller,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, OrderError> {
    let mut conn = state.pool.get().await?;
    let list: BatchList = gift_codes::list(&mut conn, Paging::from_pairs(&query)).await?;
    Ok(HttpResponse::Ok().json(list))
}

/// Issue a gift-code batch
///
/// 201 with the batch; the same reference and body again answers it (200) and issues
/// nothing. Recorded in the audit trail.
pub async fn issue_batch(
    state: web::Data<AppState>,
    Acting(operator): Acting,
    raw: web::Bytes,
) -> Result<HttpResponse, OrderError> {
    let fields = BatchFields::read(&super::json_body(&raw))?;
    let mut conn = state.pool.get().await?;
    Ok(
        match gift_codes::issue(&mut conn, &operator, fields).await? {
            Issued::New(batch) => HttpResponse::Created().json(batch),
            Issued::Again(batch) => HttpResponse::Ok().json(batch),
        },
    )
}

/// A gift-code batch with each code's state
///
/// Recorded in the trail as read by the operator named.
pub async fn batch_codes(
    state: web::Data<AppState>,
    Acting(operator): Acting,
    id: IdText,
) -> Result<HttpResponse, OrderError> {
    let mut conn = state.pool.get().await?;
    let codes = gift_codes::codes_for(&mut conn, &operator, &id, Action::GiftCodeBatchRead).await?;
    Ok(uncached().json(codes))
}

/// A gift-code batch's unused codes as CSV
///
/// `code,points,expires_at` (RFC 3339, empty for never), one row per unused code in code
/// order, for printing. Recorded in the trail as exported by the operator named.
pub async fn batch_csv(
    state: web::Data<AppState>,
    Acting(operator): Acting,
    id: IdText,
) -> Result<HttpResponse, OrderError> {
    let mut conn = state.pool.get().await?;
    let codes =
        gift_codes::codes_for(&mut conn, &operator, &id, Action::GiftCodeBatchExport).await?;
    let file = format!(
        "attachment; filename=\"gift-code-batch-{}.csv\"",
        codes.batch.id
    );
    Ok(uncached()
        .content_type("text/csv; charset=utf-8")
        .insert_header(("content-disposition", file))
        .body(gift_code_export::csv(&codes)?))
}

/// Withdraw a batch's unused codes
///
/// Every code nobody redeemed becomes unredeemable (the app answers 404); a code redeemed
/// keeps its state. Answers the batch after; recorded in the audit trail.
pub async fn withdraw_batch(
    state: web::Data<AppState>,
    Acting(operator): Acting,
    id: IdText,
) -> Result<HttpResponse, OrderError> {
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(gift_codes::withdraw(&mut conn, &operator, &id).await?))
}

/// The earn-rate table with its version
pub async fn earn_rates(
    state: web::Data<AppState>,
    _caller: Caller,
) -> Result<HttpResponse, OrderError> {
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(earn_rates::read(&mut conn).await?))
}

/// Replace the earn-rate table
///
/// From the version read (a stale one is refused); the app reads the new table at once.
/// Recorded in the audit trail.
pub async fn replace_earn_rates(
    state: web::Data<AppState>,
    Acting(operator): Acting,
    raw: web::Bytes,
) -> Result<HttpResponse, OrderError> {
    let change = RatesChange::read(&super::json_body(&raw))?;
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(earn_rates::replace(&mut conn, &operator, change).await?))
}

/// The catalog's back-office audit trail
///
/// Gift-code batches and earn rates: a page of the changes, newest first.
pub async fn audit_trail(
    state: web::Data<AppState>,
    _caller: Caller,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, OrderError> {
    let mut conn = state.pool.get().await?;
    let page: Page = back_office::audit::page(&mut conn, Paging::from_pairs(&query)).await?;
    Ok(HttpResponse::Ok().json(page))
}
