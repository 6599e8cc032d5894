//! The loyalty back office's client support: adjustments of a client's points, relayed to
//! the point service (`crate::upstream`), which owns the ledger. Checks here, in order:
//! the token (401), the role (403: super_admin only), the path's client id (404 unless a
//! positive integer); the body, the client, the reference and the balance are checked there.

use actix_web::{HttpRequest, HttpResponse, web};
use back_office::adjustments::{AdjustmentBody, AdjustmentRecord, AdjustmentRefusal};
use back_office::clients::{ClientPoints, ClientRefusal};
use envelope::Refuses;
use reqwest::Method;

use crate::auth::Operator;
use crate::error::{AdminAnswers, OpError, SuperAdminBodyAnswers};
use crate::state::AppState;
use crate::upstream::UpstreamRefusal;

/// What an adjustment may be refused for, here or by the point service.
type Refusals = Refuses<(ClientRefusal, AdjustmentRefusal, UpstreamRefusal)>;

/// A client's id in the path, read as text so that anything else is refused in the back
/// office's words ([`ClientPath::id`]).
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ClientPath {
    /// The client id: a positive integer (anything else is 404).
    #[param(value_type = i64, minimum = 1, example = 1001)]
    id: String,
}

impl ClientPath {
    /// The id as the point service's path takes it; anything but a positive integer names
    /// no client (and never another path of the point service).
    fn id(&self) -> Result<i64, OpError> {
        self.id
            .parse::<domain::ClientId>()
            .map(domain::ClientId::get)
            .map_err(|_| ClientRefusal::UnknownClient(self.id.clone()).into())
    }
}

/// A client's points as the app sees them
///
/// The balance object and a page of the history exactly as the app's `GET /points` and
/// `GET /point-history` answer them (`page`, `limit` read as there), for support. Client data,
/// so: admin, super_admin. Checks: token, role, the client.
#[utoipa::path(get, path = "/clients/{id}/points", operation_id = "getClientPoints", tag = "offers",
    security(("operator" = ["super_admin", "admin"])),
    params(ClientPath, relayed_routes::points::HistoryQuery),
    responses(AdminAnswers, Refuses<(ClientRefusal, UpstreamRefusal)>,
        (status = 200, description = "points", body = ClientPoints)))]
pub async fn points(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<ClientPath>,
    req: HttpRequest,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let id = path.id()?;
    // Only the two keys the point service reads go on, re-encoded.
    let query: Vec<(String, String)> = url::form_urlencoded::parse(req.query_string().as_bytes())
        .filter(|(key, _)| key == "page" || key == "limit")
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect();
    let query = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(query)
        .finish();
    let path = format!("/clients/{id}/points?{query}");
    state
        .point_service
        .relay(Method::GET, &path, None, None)
        .await
}

/// Adjust a client's points
///
/// A credit (positive `points`) or a debit (negative), with a reason and the operator's own
/// reference: the same reference again answers the first adjustment (200) and moves
/// nothing. A debit never leaves the balance below zero. Shown in the client's history as
/// `support_adjustment`; recorded in the loyalty audit trail. Roles: super_admin. Checks:
/// token, role, body, the client, the reference, the balance.
#[utoipa::path(post, path = "/clients/{id}/adjustments", operation_id = "adjustPoints",
    tag = "offers", security(("operator" = ["super_admin"])),
    params(ClientPath), request_body = AdjustmentBody,
    responses(SuperAdminBodyAnswers, Refusals,
        (status = 201, description = "made", body = AdjustmentRecord),
        (status = 200, description = "earlier", body = AdjustmentRecord)))]
pub async fn adjust(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<ClientPath>,
    raw: web::Bytes,
) -> Result<HttpResponse, OpError> {
    operator.require_super_admin()?;
    let id = path.id()?;
    let path = format!("/clients/{id}/adjustments");
    state
        .point_service
        .relay(Method::POST, &path, Some(&operator), Some(raw))
        .await
}
