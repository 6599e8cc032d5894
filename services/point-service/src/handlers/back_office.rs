//! The loyalty back office's routes under `/internal/v1/back-office`: the operator service
//! relays its operator routes here once it has checked the operator's token and role.
//! Checks, in order: `X-Internal-Token`, the operator named (changes), the body, the offer.
//! Every refusal is in the operator API's envelope (`BackOfficeRefusal` says why); the
//! operator service passes the body's and the offer's on unchanged.

use super::json_body;
use actix_web::{HttpRequest, HttpResponse, web};
use back_office::access::{Change, Read};
use back_office::adjustments::{
    AdjustmentBody, AdjustmentFields, AdjustmentRecord, AdjustmentRefusal,
};
use back_office::audit::Action;
use back_office::audit::{self, Page};
use back_office::clients::{ClientPoints, ClientRefusal};
use back_office::expiry_policy::{
    ExpiryChange, ExpiryPolicy, ExpiryPolicyBody, ExpiryPolicyRefusal,
};
use back_office::occasions::{
    OccasionChangeBody, OccasionCreateBody, OccasionFields, OccasionList, OccasionRecord,
    OccasionRefusal,
};
use back_office::offers::{
    OfferChangeBody, OfferCreateBody, OfferFields, OfferList, OfferRecord, OfferRefusal,
};
use back_office::paging::Paging;
use back_office::routes::{ClientPath, HexId, IdText, Route};
use envelope::Refuses;

use crate::back_office::adjustments::{self, Adjusted};
use crate::back_office::{expiry_policy, occasions, offers};
use crate::balance;
use crate::error::{DatabaseAnswers, PointError};
use crate::internal_access::{self, BackOfficeRefusal, ChangeRefusal};
use crate::state::AppState;

/// What a read may be refused for.
type ReadRefusal = BackOfficeRefusal;

/// What an adjustment may be refused for.
type Adjusting = Refuses<(
    BackOfficeRefusal,
    ChangeRefusal,
    ClientRefusal,
    AdjustmentRefusal,
)>;

/// What a replacement of the expiry policy may be refused for.
type PolicyRefusals = Refuses<(BackOfficeRefusal, ChangeRefusal, ExpiryPolicyRefusal)>;

/// What a change of an occasion may be refused for.
type OccasionRefusals = Refuses<(BackOfficeRefusal, ChangeRefusal, OccasionRefusal)>;

/// What a change of an offer may be refused for.
type Refusals = Refuses<(BackOfficeRefusal, ChangeRefusal, OfferRefusal)>;

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
#[utoipa::path(get, path = "/back-office/offers", operation_id = "backOfficeOffers", tag = "back-office",
    params(Read),
    responses(DatabaseAnswers, ReadRefusal,
        (status = 200, description = "offers", body = OfferList)))]
pub async fn list_offers(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, PointError> {
    internal_access::check_back_office_token(&req, &state)?;
    let mut conn = state.pool.get().await?;
    let data = offers::list(&mut conn).await?;
    Ok(HttpResponse::Ok().json(OfferList { data }))
}

/// Create an offer
///
/// The service assigns the id; recorded in the audit trail with the operator named.
#[utoipa::path(post, path = "/back-office/offers", operation_id = "backOfficeCreateOffer", tag = "back-office",
    params(Change),
    request_body = OfferCreateBody,
    responses(DatabaseAnswers, Refusals,
        (status = 201, description = "created", body = OfferRecord)))]
pub async fn create_offer(
    state: web::Data<AppState>,
    req: HttpRequest,
    raw: web::Bytes,
) -> Result<HttpResponse, PointError> {
    internal_access::check_back_office_token(&req, &state)?;
    let operator = internal_access::acting_operator(&req, Route::CreateOffer)?;
    let offer = OfferFields::read(&json_body(&raw), true)?.created()?;
    let mut conn = state.pool.get().await?;
    let created = offers::create(&mut conn, &operator, offer).await?;
    Ok(HttpResponse::Created().json(created))
}

/// Change an offer
///
/// The keys sent, on the offer as it is (its row locked); recorded in the audit trail.
#[utoipa::path(patch, path = "/back-office/offers/{id}", operation_id = "backOfficeUpdateOffer", tag = "back-office",
    params(HexId, Change),
    request_body = OfferChangeBody,
    responses(DatabaseAnswers, Refusals,
        (status = 200, description = "changed", body = OfferRecord)))]
pub async fn update_offer(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: IdText,
    raw: web::Bytes,
) -> Result<HttpResponse, PointError> {
    internal_access::check_back_office_token(&req, &state)?;
    let operator = internal_access::acting_operator(&req, Route::UpdateOffer)?;
    let change = OfferFields::read(&json_body(&raw), false)?;
    let mut conn = state.pool.get().await?;
    let updated = offers::update(&mut conn, &operator, &id, change).await?;
    Ok(HttpResponse::Ok().json(updated))
}

/// Withdraw an offer
///
/// Never on sale again (the app's offer answers 404), kept for the orders that name it;
/// recorded in the audit trail.
#[utoipa::path(delete, path = "/back-office/offers/{id}", operation_id = "backOfficeWithdrawOffer", tag = "back-office",
    params(HexId, Change),
    responses(DatabaseAnswers, Refusals,
        (status = 200, description = "withdrawn", body = OfferRecord)))]
pub async fn withdraw_offer(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: IdText,
) -> Result<HttpResponse, PointError> {
    internal_access::check_back_office_token(&req, &state)?;
    let operator = internal_access::acting_operator(&req, Route::WithdrawOffer)?;
    let mut conn = state.pool.get().await?;
    let withdrawn = offers::withdraw(&mut conn, &operator, &id).await?;
    Ok(HttpResponse::Ok().json(withdrawn))
}

/// The back office's audit trail
///
/// A page of the changes, newest first.
#[utoipa::path(get, path = "/back-office/audit", operation_id = "backOfficeAudit", tag = "back-office",
    params(Read, Paging),
    responses(DatabaseAnswers, ReadRefusal,
        (status = 200, description = "changes", body = Page)))]
pub async fn audit_trail(
    state: web::Data<AppState>,
    req: HttpRequest,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, PointError> {
    internal_access::check_back_office_token(&req, &state)?;
    let mut conn = state.pool.get().await?;
    let paging = Paging::from_pairs(&query);
    Ok(HttpResponse::Ok().json(audit::page(&mut conn, paging).await?))
}

/// A client's points as the app sees them
///
/// The balance and a page of the history (`page`, `limit` read as the app's history reads
/// them). Checks: the token, the client (the auth service's).
#[utoipa::path(get, path = "/back-office/clients/{id}/points", operation_id = "backOfficeClientPoints",
    tag = "back-office", params(ClientPath, Read, relayed_routes::points::HistoryQuery),
    responses(DatabaseAnswers, Refuses<(BackOfficeRefusal, ClientRefusal)>,
        (status = 200, description = "points", body = ClientPoints)))]
pub async fn client_points(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: IdText,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, PointError> {
    internal_access::check_back_office_token(&req, &state)?;
    let client_id = known_client(&state, &id).await?;
    let (page, limit) = super::points::page(&query);
    let mut conn = state.pool.get().await?;
    let balance = balance::balance(&mut conn, client_id).await?;
    let history = balance::history(&mut conn, client_id, page, limit).await?;
    Ok(HttpResponse::Ok().json(ClientPoints { balance, history }))
}

/// Adjust a client's points
///
/// Checks, after the operator: the body, the client (the auth service's), the reference,
/// the balance. 201 for a new adjustment; 200 with the first one for its reference again.
#[utoipa::path(post, path = "/back-office/clients/{id}/adjustments", operation_id = "backOfficeAdjust",
    tag = "back-office", params(ClientPath, Change),
    request_body = AdjustmentBody,
    responses(DatabaseAnswers, Adjusting,
        (status = 201, description = "made", body = AdjustmentRecord),
        (status = 200, description = "earlier", body = AdjustmentRecord)))]
pub async fn adjust(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: IdText,
    raw: web::Bytes,
) -> Result<HttpResponse, PointError> {
    internal_access::check_back_office_token(&req, &state)?;
    let operator = internal_access::acting_operator(&req, Route::AdjustPoints)?;
    let fields = AdjustmentFields::read(&json_body(&raw))?;
    let client_id = known_client(&state, &id).await?;
    let mut conn = state.pool.get().await?;
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
#[utoipa::path(get, path = "/back-office/occasions", operation_id = "backOfficeOccasions", tag = "back-office",
    params(Read),
    responses(DatabaseAnswers, ReadRefusal, (status = 200, description = "occasions", body = OccasionList)))]
pub async fn list_occasions(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, PointError> {
    internal_access::check_back_office_token(&req, &state)?;
    let mut conn = state.pool.get().await?;
    let data = occasions::list(&mut conn).await?;
    Ok(HttpResponse::Ok().json(OccasionList { data }))
}

/// Create an occasion
///
/// The service assigns the id; recorded in the audit trail.
#[utoipa::path(post, path = "/back-office/occasions", operation_id = "backOfficeCreateOccasion", tag = "back-office",
    params(Change), request_body = OccasionCreateBody,
    responses(DatabaseAnswers, OccasionRefusals, (status = 201, description = "created", body = OccasionRecord)))]
pub async fn create_occasion(
    state: web::Data<AppState>,
    req: HttpRequest,
    raw: web::Bytes,
) -> Result<HttpResponse, PointError> {
    internal_access::check_back_office_token(&req, &state)?;
    let operator = internal_access::acting_operator(&req, Route::CreateOccasion)?;
    let fields = OccasionFields::read(&json_body(&raw), true)?;
    let mut conn = state.pool.get().await?;
    let created = occasions::create(&mut conn, &operator, fields).await?;
    Ok(HttpResponse::Created().json(created))
}

/// Change an occasion
///
/// The keys sent, on the occasion as it is (its row locked); recorded in the audit trail.
#[utoipa::path(patch, path = "/back-office/occasions/{id}", operation_id = "backOfficeUpdateOccasion",
    tag = "back-office", params(HexId, Change), request_body = OccasionChangeBody,
    responses(DatabaseAnswers, OccasionRefusals, (status = 200, description = "changed", body = OccasionRecord)))]
pub async fn update_occasion(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: IdText,
    raw: web::Bytes,
) -> Result<HttpResponse, PointError> {
    internal_access::check_back_office_token(&req, &state)?;
    let operator = internal_access::acting_operator(&req, Route::UpdateOccasion)?;
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
#[utoipa::path(delete, path = "/back-office/occasions/{id}", operation_id = "backOfficeWithdrawOccasion",
    tag = "back-office", params(HexId, Change),
    responses(DatabaseAnswers, OccasionRefusals, (status = 200, description = "withdrawn", body = OccasionRecord)))]
pub async fn withdraw_occasion(
    state: web::Data<AppState>,
    req: HttpRequest,
    id: IdText,
) -> Result<HttpResponse, PointError> {
    internal_access::check_back_office_token(&req, &state)?;
    let operator = internal_access::acting_operator(&req, Route::WithdrawOccasion)?;
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
#[utoipa::path(get, path = "/back-office/expiry-policy", operation_id = "backOfficeExpiryPolicy",
    tag = "back-office", params(Read),
    responses(DatabaseAnswers, ReadRefusal, (status = 200, description = "policy", body = ExpiryPolicy)))]
pub async fn expiry_policy(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, PointError> {
    internal_access::check_back_office_token(&req, &state)?;
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(expiry_policy::read(&mut conn).await?))
}

/// Replace the expiry policy
///
/// From the version read (a stale one is refused); recorded in the audit trail.
#[utoipa::path(put, path = "/back-office/expiry-policy", operation_id = "backOfficeReplaceExpiryPolicy",
    tag = "back-office", params(Change), request_body = ExpiryPolicyBody,
    responses(DatabaseAnswers, PolicyRefusals, (status = 200, description = "replaced", body = ExpiryPolicy)))]
pub async fn replace_expiry_policy(
    state: web::Data<AppState>,
    req: HttpRequest,
    raw: web::Bytes,
) -> Result<HttpResponse, PointError> {
    internal_access::check_back_office_token(&req, &state)?;
    let operator = internal_access::acting_operator(&req, Route::ReplaceExpiryPolicy)?;
    let change = ExpiryChange::read(&json_body(&raw))?;
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(expiry_policy::replace(&mut conn, &operator, change).await?))
}
