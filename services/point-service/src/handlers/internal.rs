//! `POST /internal/v1/credits`, for the order service only (`internal_access`); never exposed
//! by an ingress.

use actix_web::{HttpRequest, HttpResponse, web};
use bigdecimal::BigDecimal;
use envelope::Refuses;
use serde_json::Value;

use crate::error::DatabaseAnswers;
use crate::error::PointError;
use crate::internal_access::{self, InternalRefusal};
use crate::ledger::credits::{self, CreditRefusal, Credited};
use crate::state::AppState;

/// The body as the document shows it (the handler reads the raw JSON: any field missing or
/// of another kind is the one 400).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct CreditBody {
    #[schema(minimum = 1, example = 1002)]
    client_id: i64,
    /// Positive points: decimal text (`"100"`, `"12.345"`), or a JSON number read
    /// exactly as the decimal it writes (`12.345`, never through a double).
    #[schema(example = "100")]
    points: String,
    #[schema(example = "gift-card:example-1")]
    reference: String,
    /// gift_card.
    #[schema(pattern = "^gift_card$", example = "gift_card")]
    reason: String,
}

/// Credit a client once per reference
///
/// For the order service only (a gift-card code's redemption): a credential missing, forged,
/// expired or made for another request or body is `InternalRefusal::Unauthenticated`, one of
/// another service `NotAdmitted`; a field missing or of another kind is `BadBody`. The same
/// reference again answers the first result and credits nothing; with another client or
/// amount it is `ReferenceUsed`.
#[utoipa::path(post, path = "/credits",
    request_body = CreditBody,
    responses(DatabaseAnswers, Refuses<(InternalRefusal, CreditRefusal)>,
        (status = 200, body = Credited),
        credits::BadBodyAnswer))]
pub async fn credit_points(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, PointError> {
    internal_access::admit(
        &req,
        &state,
        service_identity::InternalRoute::Credits,
        &body,
    )?;
    let body = super::json_body(&body);
    let client_id = body
        .get("client_id")
        .and_then(Value::as_i64)
        .filter(|id| *id > 0);
    let points: Option<BigDecimal> = match body.get("points") {
        Some(Value::String(s)) => s
            .parse::<domain::Points>()
            .ok()
            .map(domain::Points::into_decimal),
        // Exactly the number's decimal (`12.345` is 12.345), never an f64's.
        Some(Value::Number(n)) => domain::decimal::from_number(n).ok(),
        _ => None,
    }
    .filter(|p| p.sign() == bigdecimal::num_bigint::Sign::Plus);
    let reference = body
        .get("reference")
        .and_then(Value::as_str)
        .map(str::trim)
        // `support:` is the back office's adjustments' (`back_office::adjustments`): a credit
        // there would take a reference an adjustment needs, or the other way round.
        .filter(|r| !r.is_empty() && r.len() <= 200 && !r.starts_with("support:"));
    let reason = body.get("reason").and_then(Value::as_str);
    let (Some(client_id), Some(points), Some(reference), Some("gift_card")) =
        (client_id, points, reference, reason)
    else {
        return Err(PointError::Refused(CreditRefusal::BadBody.into()));
    };
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(credits::credit(&mut conn, client_id, &points, reference).await?))
}
