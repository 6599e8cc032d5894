//! The loyalty back office's routes over the catalog under `/internal/v1/back-office`: the
//! operator service relays its operator routes here once it has checked the operator's
//! token and role. Checks, in order: `X-Internal-Token`, the operator named (changes), the
//! body, the batch. Every refusal is in the operator API's envelope, which the operator
//! service passes on unchanged.

use actix_web::{HttpRequest, HttpResponse, web};
use back_office::access::{self, ActingOperator, BackOfficeRefusal, Change, ChangeRefusal, Read};
use back_office::audit::Action;
use back_office::audit::Page;
use back_office::earn_rates::{EarnRateTable, EarnRateTableBody, RatesChange, RatesRefusal};
use back_office::gift_codes::{
    BatchBody, BatchCodes, BatchFields, BatchList, BatchLookupRefusal, BatchRecord, BatchRefusal,
};
use back_office::paging::Paging;
use back_office::routes::{BatchPath, IdText, Route};
use envelope::Refuses;

use crate::back_office::gift_codes::{self, Issued};
use crate::back_office::{earn_rates, gift_code_export};
use crate::error::{DatabaseAnswers, OrderError};
use crate::state::AppState;

/// What a read of a batch's codes may be refused for.
type BatchReadRefusals = Refuses<(BackOfficeRefusal, ChangeRefusal, BatchLookupRefusal)>;
/// What an issue may be refused for.
type IssueRefusals = Refuses<(BackOfficeRefusal, ChangeRefusal, BatchRefusal)>;
/// What a withdrawal may be refused for.
type WithdrawRefusals = Refuses<(BackOfficeRefusal, ChangeRefusal, BatchLookupRefusal)>;
/// What a replacement of the table may be refused for.
type RatesRefusals = Refuses<(BackOfficeRefusal, ChangeRefusal, RatesRefusal)>;

/// The internal token, refused in the back office's envelope.
fn check_token(req: &HttpRequest, state: &AppState) -> Result<(), OrderError> {
    Ok(access::check_token(req, &state.credit.internal_token)?)
}

/// The token, then the operator a change (or a read of codes) is made for, if `route`
/// admits its role.
fn acting(req: &HttpRequest, state: &AppState, route: Route) -> Result<ActingOperator, OrderError> {
    check_token(req, state)?;
    Ok(access::acting_operator(req, route)?)
}

/// An answer that holds codes: no cache keeps a copy of vouchers.
fn uncached() -> actix_web::HttpResponseBuilder {
    let mut answer = HttpResponse::Ok();
    answer.insert_header(("cache-control", "no-store"));
    answer
}

/// The gift-code batches
///
/// A page of them, newest first, each with its codes counted by state.
#[utoipa::path(get, path = "/back-office/gift-code-batches", operation_id = "backOfficeGiftCodeBatches",
    tag = "back-office", params(Read, Paging),
    responses(DatabaseAnswers, BackOfficeRefusal, (status = 200, description = "page", body = BatchList)))]
pub async fn list_batches(
    state: web::Data<AppState>,
    req: HttpRequest,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, OrderError> {
    check_token(&req, &state)?;
    let mut conn = state.pool.get().await?;
    let list: BatchList = gift_codes::list(&mut conn, Paging::from_pairs(&query)).await?;
    Ok(HttpResponse::Ok().json(list))
}

/// Issue a gift-code batch
///
/// 201 with the batch; the same reference and body again answers it (200) and issues
/// nothing. Recorded in the audit trail.
#[utoipa::path(post, path = "/back-office/gift-code-batches", operation_id = "backOfficeIssueGiftCodes",
    tag = "back-office", params(Change), request_body = BatchBody,
    responses(DatabaseAnswers, IssueRefusals,
        (status = 201, description = "issued", body = BatchRecord),
        (status = 200, description = "a retry", body = BatchRecord)))]
pub async fn issue_batch(
    state: web::Data<AppState>,
    req: HttpRequest,
    raw: web::Bytes,
) -> Result<HttpResponse, OrderError> {
    let operator = acting(&req, &state, Route::IssueBatch)?;
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
#[utoipa::path(get, path = "/back-office/gift-code-batches/{id}", operation_id = "backOfficeGiftCodeBatch",
    tag = "back-office", params(BatchPath, Change),
    responses(DatabaseAnswers, BatchReadRefusals, (status = 200, description = "batch", body = BatchCodes)))]
pub async fn batch_codes(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: IdText,
) -> Result<HttpResponse, OrderError> {
    let operator = acting(&req, &state, Route::Batch)?;
    let mut conn = state.pool.get().await?;
    let codes = gift_codes::codes_for(&mut conn, &operator, &id, Action::GiftCodeBatchRead).await?;
    Ok(uncached().json(codes))
}

/// A gift-code batch's unused codes as CSV
///
/// `code,points,expires_at` (RFC 3339, empty for never), one row per unused code in code
/// order, for printing. Recorded in the trail as exported by the operator named.
#[utoipa::path(get, path = "/back-office/gift-code-batches/{id}/codes.csv", operation_id = "backOfficeGiftCodesCsv",
    tag = "back-office", params(BatchPath, Change),
    responses(DatabaseAnswers, BatchReadRefusals,
        (status = 200, description = "codes", content_type = "text/csv", body = String)))]
pub async fn batch_csv(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: IdText,
) -> Result<HttpResponse, OrderError> {
    let operator = acting(&req, &state, Route::ExportBatch)?;
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
#[utoipa::path(delete, path = "/back-office/gift-code-batches/{id}", operation_id = "backOfficeWithdrawGiftCodes",
    tag = "back-office", params(BatchPath, Change),
    responses(DatabaseAnswers, WithdrawRefusals, (status = 200, description = "after", body = BatchRecord)))]
pub async fn withdraw_batch(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: IdText,
) -> Result<HttpResponse, OrderError> {
    let operator = acting(&req, &state, Route::WithdrawBatch)?;
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(gift_codes::withdraw(&mut conn, &operator, &id).await?))
}

/// The earn-rate table with its version
#[utoipa::path(get, path = "/back-office/earn-rates", operation_id = "backOfficeEarnRates",
    tag = "back-office", params(Read),
    responses(DatabaseAnswers, BackOfficeRefusal, (status = 200, description = "table", body = EarnRateTable)))]
pub async fn earn_rates(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, OrderError> {
    check_token(&req, &state)?;
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(earn_rates::read(&mut conn).await?))
}

/// Replace the earn-rate table
///
/// From the version read (a stale one is refused); the app reads the new table at once.
/// Recorded in the audit trail.
#[utoipa::path(put, path = "/back-office/earn-rates", operation_id = "backOfficeReplaceEarnRates",
    tag = "back-office", params(Change), request_body = EarnRateTableBody,
    responses(DatabaseAnswers, RatesRefusals, (status = 200, description = "table", body = EarnRateTable)))]
pub async fn replace_earn_rates(
    state: web::Data<AppState>,
    req: HttpRequest,
    raw: web::Bytes,
) -> Result<HttpResponse, OrderError> {
    let operator = acting(&req, &state, Route::ReplaceEarnRates)?;
    let change = RatesChange::read(&super::json_body(&raw))?;
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(earn_rates::replace(&mut conn, &operator, change).await?))
}

/// The catalog's back-office audit trail
///
/// Gift-code batches and earn rates: a page of the changes, newest first.
#[utoipa::path(get, path = "/back-office/catalog-audit", operation_id = "backOfficeCatalogAudit",
    tag = "back-office", params(Read, Paging),
    responses(DatabaseAnswers, BackOfficeRefusal, (status = 200, description = "page", body = Page)))]
pub async fn audit_trail(
    state: web::Data<AppState>,
    req: HttpRequest,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, OrderError> {
    check_token(&req, &state)?;
    let mut conn = state.pool.get().await?;
    let page: Page = back_office::audit::page(&mut conn, Paging::from_pairs(&query)).await?;
    Ok(HttpResponse::Ok().json(page))
}
