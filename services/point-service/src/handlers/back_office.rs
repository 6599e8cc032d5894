//! The handlers of the loyalty back office's routes the table gives the point service
//! (`back_office::routes`), under `/internal/v1/back-office`: the operator service relays its
//! operator routes here once it has checked the operator's token and role. Checks, in order:
//! the caller and the operator named (`back_office::keeper`, before any handler), the body,
//! the offer. Every refusal is in the operator API's envelope; the operator service passes
//! the body's and the offer's on unchanged.

use super::json_body;
use actix_web::{HttpResponse, web};
use back_office::adjustments::AdjustmentFields;
use back_office::audit::{self, Action};
use back_office::clients::{ClientPoints, ClientRefusal};
use back_office::expiry_policy::ExpiryChange;
use back_office::keeper::{Acting, Caller};
use back_office::occasions::{OccasionFields, OccasionList};
use back_office::offers::{OfferFields, OfferList};
use back_office::paging::Paging;
use back_office::reads;
use back_office::routes::IdText;

use crate::back_office::adjustments::{self, Adjusted};
use crate::back_office::{expiry_policy, occasions, offers};
use crate::balance;
use crate::error::PointError;
use crate::state::AppState;

/// The path's client: a positive integer the auth service knows, else `UnknownClient` with
/// the id as sent. Asked before a connection is taken: none is held while the auth service
/// answers.
async fn known_client(state: &AppState, id: &str) -> Result<i64, PointError> {
    let unknown = || ClientRefusal::UnknownClient(id.to_owned());
    let client_id = id.parse::<domain::ClientId>().map_err(|_| unknown())?.get();
    match state.auth.client(client_id).await? {
        Some(_) => Ok(client_id),
        None => Err(unknown().into()),
    }
}

/// Every offer, on sale or not
///
/// Those not withdrawn first, then as the app lists them.
pub async fn list_offers(
    state: web::Data<AppState>,
    _caller: Caller,
) -> Result<HttpResponse, PointError> {
    let mut conn = state.pool.get().await?;
    let data = offers::list(&mut conn).await?;
    Ok(HttpResponse::Ok().json(OfferList { data }))
}

/// Create an offer
///
/// The service assigns the id; recorded in the audit trail with the operator named.
pub async fn create_offer(
    state: web::Data<AppState>,
    Acting(operator): Acting,
    raw: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let offer = OfferFields::read(&json_body(&raw), true)?.created()?;
    let mut conn = state.pool.get().await?;
    let limit = state.offer_max_points_per_sar.as_ref();
    let created = offers::create(&mut conn, &operator, offer, limit).await?;
    Ok(HttpResponse::Created().json(created))
}

/// Change an offer
///
/// The keys sent, on the offer as it is (its row locked); recorded in the audit trail.
pub async fn update_offer(
    state: web::Data<AppState>,
    Acting(operator): Acting,
    id: IdText,
    raw: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let change = OfferFields::read(&json_body(&raw), false)?;
    let mut conn = state.pool.get().await?;
    let limit = state.offer_max_points_per_sar.as_ref();
    let updated = offers::update(&mut conn, &operator, &id, change, limit).await?;
    Ok(HttpResponse::Ok().json(updated))
}

/// Withdraw an offer
///
/// Never on sale again (the app's offer answers 404), kept for the orders that name it;
/// recorded in the audit trail.
pub async fn withdraw_offer(
    state: web::Data<AppState>,
    Acting(operator): Acting,
    id: IdText,
) -> Result<HttpResponse, PointError> {
    let mut conn = state.pool.get().await?;
    let withdrawn = offers::withdraw(&mut conn, &operator, &id).await?;
    Ok(HttpResponse::Ok().json(withdrawn))
}

/// The back office's audit trail
///
/// A page of the changes, newest first.
pub async fn audit_trail(
    state: web::Data<AppState>,
    _caller: Caller,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, PointError> {
    let mut conn = state.pool.get().await?;
    let paging = Paging::from_pairs(&query);
    Ok(HttpResponse::Ok().json(audit::page(&mut conn, paging).await?))
}

/// A client's points as the app sees them
///
/// The balance and a page of the history (`page`, `limit` read as the app's history reads
/// them), once the read is recorded with its operator (`back_office::reads`): a read that
/// could not be recorded is not answered. Checks: the caller and the operator, the client
/// (the auth service's).
pub async fn client_points(
    state: web::Data<AppState>,
    Acting(operator): Acting,
    id: IdText,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, PointError> {
    let client_id = known_client(&state, &id).await?;
    let (page, limit) = super::points::page(&query);
    let mut conn = state.pool.get().await?;
    reads::record(&mut conn, &operator, client_id).await?;
    let balance = balance::balance(&mut conn, client_id).await?;
    let history = balance::history(&mut conn, client_id, page, limit).await?;
    Ok(HttpResponse::Ok().json(ClientPoints { balance, history }))
}

/// Who read which client's points
///
/// A page of the reads, newest first; the keeper checks that its operator is a super_admin.
pub async fn client_reads(
    state: web::Data<AppState>,
    _operator: Acting,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, PointError> {
    let mut conn = state.pool.get().await?;
    let paging = Paging::from_pairs(&query);
    Ok(HttpResponse::Ok().json(reads::page(&mut conn, paging).await?))
}

/// Adjust a client's points
///
/// Checks, after the operator: the body, the client (the auth service's), the reference,
/// the balance. 201 for a new adjustment; 200 with the first one for its reference again.
pub async fn adjust(
    state: web::Data<AppState>,
    Acting(operator): Acting,
    id: IdText,
    raw: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let fields = AdjustmentFields::read(&json_body(&raw))?;
    let client_id = known_client(&state, &id).await?;
    let mut conn = state.pool.get().await?;
    // Its answer, or its refusal of an overdraft, shows the client's balance: a read too.
    reads::record(&mut conn, &operator, client_id).await?;
    Ok(
        match adjustments::adjust(&mut conn, &operator, client_id, fields).await? {
            Adjusted::Made(made) => HttpResponse::Created().json(made),
            Adjusted::Earlier(earlier) => HttpResponse::Ok().json(earlier),
        },
    )
}

/// Every occasion, active or not
///
/// The active ones first, then by id.
pub async fn list_occasions(
    state: web::Data<AppState>,
    _caller: Caller,
) -> Result<HttpResponse, PointError> {
    let mut conn = state.pool.get().await?;
    let data = occasions::list(&mut conn).await?;
    Ok(HttpResponse::Ok().json(OccasionList { data }))
}

/// Create an occasion
///
/// The service assigns the id; recorded in the audit trail.
pub async fn create_occasion(
    state: web::Data<AppState>,
    Acting(operator): Acting,
    raw: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let fields = OccasionFields::read(&json_body(&raw), true)?;
    let mut conn = state.pool.get().await?;
    let created = occasions::create(&mut conn, &operator, fields).await?;
    Ok(HttpResponse::Created().json(created))
}

/// Change an occasion
///
/// The keys sent, on the occasion as it is (its row locked); recorded in the audit trail.
pub async fn update_occasion(
    state: web::Data<AppState>,
    Acting(operator): Acting,
    id: IdText,
    raw: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let fields = OccasionFields::read(&json_body(&raw), false)?;
    let mut conn = state.pool.get().await?;
    let changed =
        occasions::update(&mut conn, &operator, &id, fields, Action::OccasionUpdate).await?;
    Ok(HttpResponse::Ok().json(changed))
}

/// Withdraw an occasion
///
/// Inactive: no longer offered to the app nor accepted by a new order; recorded in the
/// audit trail.
pub async fn withdraw_occasion(
    state: web::Data<AppState>,
    Acting(operator): Acting,
    id: IdText,
) -> Result<HttpResponse, PointError> {
    let inactive = OccasionFields {
        active: Some(false),
        ..OccasionFields::default()
    };
    let mut conn = state.pool.get().await?;
    let withdrawn = occasions::update(
        &mut conn,
        &operator,
        &id,
        inactive,
        Action::OccasionWithdraw,
    )
    .await?;
    Ok(HttpResponse::Ok().json(withdrawn))
}

/// The expiry policy
pub async fn expiry_policy(
    state: web::Data<AppState>,
    _caller: Caller,
) -> Result<HttpResponse, PointError> {
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(expiry_policy::read(&mut conn).await?))
}

/// Replace the expiry policy
///
/// From the version read (a stale one is refused); recorded in the audit trail.
pub async fn replace_expiry_policy(
    state: web::Data<AppState>,
    Acting(operator): Acting,
    raw: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let change = ExpiryChange::read(&json_body(&raw))?;
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(expiry_policy::replace(&mut conn, &operator, change).await?))
}

/// What an expiry policy would take
///
/// The next expiry run's take under the policy sent, nothing changed.
pub async fn dry_run_expiry_policy(
    state: web::Data<AppState>,
    _operator: Acting,
    raw: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let change = ExpiryChange::read(&json_body(&raw))?;
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(expiry_policy::dry_run(&mut conn, &change).await?))
}
