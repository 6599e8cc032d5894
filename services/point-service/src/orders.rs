//! Point orders (no HTTP in here): create (`point` settles at once, `checkout` waits for a
//! card payment), read, and the gift message.

use bigdecimal::BigDecimal;
use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use envelope::RetryAfter;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::db::schema::{idempotency_keys, point_orders};
use crate::error::{NOT_FOUND_ORDER, PointError};
use crate::ledger::{self, Entry, Kind};
use crate::numbers::{as_money, as_number, as_optional_number};
use crate::offers::{self, OccasionRow, Offer};
use crate::order_body::{OrderRequest, PaymentType};
use crate::state::AppState;

/// How long an `Idempotency-Key` binds to its first order.
pub const IDEMPOTENCY_WINDOW: Duration = Duration::hours(24);
/// How far back unpaid `checkout` orders count against `UNPAID_ORDERS_PER_CLIENT_PER_DAY`.
const UNPAID_WINDOW: Duration = Duration::hours(24);

/// The nine keys of a point order, the same from create and get.
#[derive(Debug, Clone, Serialize, Queryable, Selectable, ToSchema)]
#[diesel(table_name = point_orders)]
#[schema(as = Order)]
pub struct OrderView {
    pub correlation_id: Uuid,
    pub order_no: Option<i64>,
    /// initial_order, paid, payment_failed, successful.
    pub status: String,
    /// CAPTURED, FAILED, AUTHORIZED or null.
    pub payment_status: Option<String>,
    /// The offer's point_amount, exactly (see the offer).
    #[serde(serialize_with = "as_number")]
    #[schema(value_type = f64)]
    pub point_amount: BigDecimal,
    /// The offer's purchased_point_amount, exactly; a `point` order charged the payer
    /// exactly this.
    #[serde(serialize_with = "as_optional_number")]
    #[schema(value_type = Option<f64>)]
    pub purchased_point_amount: Option<BigDecimal>,
    /// SAR, two decimals; the card payment is exactly 100 times this in halalas.
    #[serde(serialize_with = "as_money")]
    #[schema(value_type = String)]
    pub money_amount: BigDecimal,
    pub payment_type: String,
    /// gift or transfer.
    pub order_type: String,
}

/// An order with what the pay routes and the webhook need besides the nine keys.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = point_orders)]
pub struct OrderRow {
    pub correlation_id: Uuid,
    pub payer_id: i64,
    pub recipient_id: i64,
    pub status: String,
    pub point_amount: BigDecimal,
    pub money_amount: BigDecimal,
    pub payment_type: String,
}

pub async fn view(conn: &mut AsyncPgConnection, correlation_id: Uuid) -> QueryResult<OrderView> {
    point_orders::table
        .find(correlation_id)
        .select(OrderView::as_select())
        .first(conn)
        .await
}

/// An order the caller may see (as payer or recipient); anyone else gets the same 404.
pub async fn visible_to(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
    caller: i64,
) -> Result<OrderView, PointError> {
    point_orders::table
        .find(correlation_id)
        .filter(
            point_orders::payer_id
                .eq(caller)
                .or(point_orders::recipient_id.eq(caller)),
        )
        .select(OrderView::as_select())
        .first(conn)
        .await
        .optional()?
        .ok_or_else(|| PointError::NotFound(NOT_FOUND_ORDER.into()))
}

/// The first order made with this caller's key within the window, if any; a different
/// request under the same key is a 409.
async fn replay(
    conn: &mut AsyncPgConnection,
    caller: i64,
    key: &str,
    fingerprint: &[u8],
) -> Result<Option<OrderView>, PointError> {
    let found: Option<(Vec<u8>, Uuid)> = idempotency_keys::table
        .find((caller, key))
        .filter(idempotency_keys::created_at.gt(Utc::now() - IDEMPOTENCY_WINDOW))
        .select((
            idempotency_keys::request_hash,
            idempotency_keys::correlation_id,
        ))
        .first(conn)
        .await
        .optional()?;
    match found {
        None => Ok(None),
        Some((hash, _)) if hash != fingerprint => Err(PointError::Conflict(
            "Idempotency-Key was already used with a different request".into(),
        )),
        Some((_, correlation_id)) => Ok(Some(view(conn, correlation_id).await?)),
    }
}

/// What the checks before the write found.
struct Checked {
    offer: Offer,
    occasion: Option<OccasionRow>,
}

/// `POST /point-orders`. Checks, in the spec's order — `point`: flag, self-payment, offer,
/// recipient, occasion, points price, payer profile, then the charge; `checkout`: offer,
/// recipient, occasion, then the order is saved. The remote checks (recipient, payer) run
/// before the transaction, which never waits on another service.
pub async fn create(
    state: &AppState,
    caller: i64,
    request: &OrderRequest,
    key: Option<&str>,
) -> Result<OrderView, PointError> {
    let fingerprint = request.fingerprint();
    if let Some(key) = key {
        let mut conn = state.pool.get().await?;
        if let Some(order) = replay(&mut conn, caller, key, &fingerprint).await? {
            return Ok(order);
        }
    }
    let is_point = request.payment_type == PaymentType::Point;
    if is_point {
        if !state.flags.point_orders {
            return Err(PointError::Forbidden(
                "paying a point order with points is disabled",
            ));
        }
        if request.to_client_id == caller {
            return Err(PointError::Validation(
                "a point order cannot be paid with points to yourself".into(),
            ));
        }
    }
    let checked = check(state, request).await?;
    if is_point {
        if checked.offer.purchased_point_amount.is_none() {
            return Err(PointError::Validation(format!(
                "point offer {} cannot be paid with points: it has no purchased_point_amount",
                checked.offer.id
            )));
        }
        if state.auth.client(caller).await?.is_none() {
            return Err(PointError::Validation(format!(
                "client {caller} does not exist"
            )));
        }
    }
    let mut conn = state.pool.get().await?;
    let correlation_id = Uuid::new_v4();
    let outcome = conn
        .transaction::<_, PointError, _>(async |conn| {
            if let Some(key) = key {
                // An expired claim is forgotten; a live one stays. A concurrent request with
                // the same key waits on the insert for the first to commit, then finds it.
                diesel::delete(idempotency_keys::table.find((caller, key)))
                    .filter(idempotency_keys::created_at.le(Utc::now() - IDEMPOTENCY_WINDOW))
                    .execute(conn)
                    .await?;
                let claimed = diesel::insert_into(idempotency_keys::table)
                    .values((
                        idempotency_keys::client_id.eq(caller),
                        idempotency_keys::key.eq(key),
                        idempotency_keys::request_hash.eq(&fingerprint),
                        idempotency_keys::correlation_id.eq(correlation_id),
                    ))
                    .on_conflict_do_nothing()
                    .execute(conn)
                    .await?;
                if claimed == 0 {
                    return Ok(None);
                }
            }
            if !is_point {
                check_unpaid(conn, caller, state.limits.unpaid_orders_per_day).await?;
            }
            save(conn, caller, request, &checked, correlation_id).await?;
            Ok(Some(view(conn, correlation_id).await?))
        })
        .await;
    match outcome {
        Ok(Some(order)) => {
            tracing::info!(order.id = %correlation_id, client.id = caller, payment_type = request.payment_type.as_str(), "point order created");
            Ok(order)
        }
        // Another request with the same key won the race: answer its order.
        Ok(None) => match key {
            Some(key) => replay(&mut conn, caller, key, &fingerprint)
                .await?
                .ok_or_else(|| PointError::Internal("idempotency key vanished".into())),
            None => Err(PointError::Internal("no key but no order".into())),
        },
        Err(e) => Err(e),
    }
}

/// Refuses a new `checkout` order when the payer already has `limit` unpaid ones from the
/// last 24 hours. A checkout order costs nothing until it is paid, so this is what keeps one
/// client from growing the table without end. Serialised per payer (advisory lock until the
/// transaction ends), so a burst of parallel creates cannot overshoot the bound.
async fn check_unpaid(
    conn: &mut AsyncPgConnection,
    caller: i64,
    limit: u64,
) -> Result<(), PointError> {
    diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext('unpaid-orders:' || $1)::bigint)")
        .bind::<diesel::sql_types::BigInt, _>(caller)
        .execute(conn)
        .await?;
    // The newest `limit` unpaid orders of the window: all of them reach the limit, and the
    // oldest of them leaving the window (or being paid) is what lets the next create in.
    let now = Utc::now();
    let newest: Vec<DateTime<Utc>> = point_orders::table
        .filter(point_orders::payer_id.eq(caller))
        .filter(point_orders::status.eq("initial_order"))
        .filter(point_orders::created_at.gt(now - UNPAID_WINDOW))
        .select(point_orders::created_at)
        .order(point_orders::created_at.desc())
        .limit(i64::try_from(limit).unwrap_or(i64::MAX))
        .load(conn)
        .await?;
    if u64::try_from(newest.len()).unwrap_or(u64::MAX) >= limit {
        let frees_at = newest.last().map(|oldest| *oldest + UNPAID_WINDOW);
        let wait = frees_at.map(|at| {
            let ms = (at - now).num_milliseconds();
            // Whole seconds, rounded up.
            (ms + 999).div_euclid(1000)
        });
        return Err(PointError::TooManyRequests(
            format!(
                "too many unpaid point orders: {limit} in 24 hours; pay or drop the older ones first"
            ),
            Some(RetryAfter::seconds(wait)),
        ));
    }
    Ok(())
}

/// Offer, recipient, occasion — in that order.
async fn check(state: &AppState, request: &OrderRequest) -> Result<Checked, PointError> {
    let offer = {
        let mut conn = state.pool.get().await?;
        offers::find_active(&mut conn, &request.point_offer_id).await?
    };
    if state.auth.client(request.to_client_id).await?.is_none() {
        return Err(PointError::Validation(format!(
            "to_client_id {} does not exist",
            request.to_client_id
        )));
    }
    let occasion = match &request.point_occasion_id {
        None => None,
        Some(id) => {
            let mut conn = state.pool.get().await?;
            Some(offers::find_active_occasion(&mut conn, id).await?)
        }
    };
    Ok(Checked { offer, occasion })
}

/// Writes the order; for `point`, charges the payer and credits the recipient with it.
async fn save(
    conn: &mut AsyncPgConnection,
    caller: i64,
    request: &OrderRequest,
    checked: &Checked,
    correlation_id: Uuid,
) -> Result<(), PointError> {
    let offer = &checked.offer;
    let is_point = request.payment_type == PaymentType::Point;
    let price = offer.purchased_point_amount.clone().unwrap_or_default();
    let accounts = if is_point {
        let mut accounts = ledger::lock_accounts(conn, &[caller, request.to_client_id])
            .await?
            .into_iter();
        match (accounts.next(), accounts.next()) {
            (Some(payer), Some(recipient)) if *payer.balance() >= price => Some((payer, recipient)),
            _ => return Err(PointError::InsufficientPoints(caller)),
        }
    } else {
        None
    };
    diesel::insert_into(point_orders::table)
        .values((
            point_orders::correlation_id.eq(correlation_id),
            point_orders::payer_id.eq(caller),
            point_orders::recipient_id.eq(request.to_client_id),
            point_orders::point_offer_id.eq(&offer.id),
            point_orders::status.eq(if is_point {
                "successful"
            } else {
                "initial_order"
            }),
            point_orders::point_amount.eq(&offer.point_amount),
            point_orders::purchased_point_amount.eq(&offer.purchased_point_amount),
            point_orders::money_amount.eq(&offer.amount),
            point_orders::payment_type.eq(request.payment_type.as_str()),
            point_orders::order_type.eq(if checked.occasion.is_some() {
                "gift"
            } else {
                "transfer"
            }),
            point_orders::point_occasion_id.eq(checked.occasion.as_ref().map(|o| o.id.as_str())),
            point_orders::occasion.eq(&request.occasion),
        ))
        .execute(conn)
        .await?;
    if let Some((mut payer, mut recipient)) = accounts {
        ledger::append(
            conn,
            &mut payer,
            Entry {
                kind: Kind::GiftSent,
                points: -price,
                order: Some(correlation_id),
                reference: None,
                at: None,
            },
        )
        .await?;
        ledger::append(
            conn,
            &mut recipient,
            Entry {
                kind: Kind::GiftReceived,
                points: offer.point_amount.clone(),
                order: Some(correlation_id),
                reference: None,
                at: None,
            },
        )
        .await?;
    }
    Ok(())
}

/// The gift message: who gives how many points, and for which occasion. The double space
/// before the occasion is the legacy text's, kept on purpose.
pub fn description(giver: &str, points: &BigDecimal, occasion: Option<&str>) -> String {
    let points = domain::Points::new(points.clone()).to_text();
    match occasion {
        Some(occasion) => format!("{giver} sent you {points} points  for {occasion}"),
        None => format!("{giver} sent you {points} points"),
    }
}

/// An order for the pay routes: the caller's own only (the recipient gets 404 too).
pub async fn payers_order(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
    payer: i64,
) -> Result<OrderRow, PointError> {
    point_orders::table
        .find(correlation_id)
        .filter(point_orders::payer_id.eq(payer))
        .select(OrderRow::as_select())
        .first(conn)
        .await
        .optional()?
        .ok_or_else(|| PointError::NotFound(NOT_FOUND_ORDER.into()))
}

/// The best-effort note of the last pay call (provider and payment reference).
pub async fn note_payment(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
    provider: &str,
    reference: Option<&str>,
) {
    let noted = diesel::update(point_orders::table.find(correlation_id))
        .set((
            point_orders::payment_provider.eq(provider),
            point_orders::payment_reference.eq(reference),
            point_orders::updated_at.eq(diesel::dsl::now),
        ))
        .execute(conn)
        .await;
    if let Err(e) = noted {
        tracing::warn!(order.id = %correlation_id, error.message = %e, "payment note not saved");
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    #[test]
    fn the_description_keeps_its_double_space() {
        let points = BigDecimal::from_str("100.50").unwrap();
        assert_eq!(
            description("Sara Ali", &points, Some("Eid")),
            "Sara Ali sent you 100.5 points  for Eid"
        );
        assert_eq!(
            description("Sara Ali", &points, None),
            "Sara Ali sent you 100.5 points"
        );
    }
}
