//! `POST /point-orders`: each payment type's checks around the shared ones (offer, recipient,
//! occasion), in the spec's order as the contract documents them
//! (`relayed_routes::orders::create_point_order`), then the order written in one transaction, once per
//! idempotency key. The remote checks (recipient, payer) run before the transaction, which
//! never waits on another service.

use bigdecimal::BigDecimal;
use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use envelope::RetryAfter;
use relayed_routes::offers::Offer;
use relayed_routes::orders::{OrderRefusal, OrderView, PayerRefusal};
use uuid::Uuid;

use super::idempotency::Claim;
use super::{OrderType, Status};
use crate::clients::auth::AuthClient;
use crate::db::schema::point_orders;
use crate::error::PointError;
use crate::ledger::{self, Entry, Kind};
use crate::offers::{self, OccasionRow};
use crate::order_body::{OrderRequest, PaymentType};
use crate::state::AppState;

/// How far back unpaid `checkout` orders count against `UNPAID_ORDERS_PER_CLIENT_PER_DAY`.
const UNPAID_WINDOW: Duration = Duration::hours(24);

/// What creating an order needs besides the request. Each database step takes a connection
/// of its own and gives it back: none is held while the auth service is asked.
pub struct Ordering<'a> {
    pub pool: &'a db::Pool,
    pub auth: &'a AuthClient,
    /// `POINT_ORDER_POINT_ENABLED`.
    pub point_enabled: bool,
    /// `UNPAID_ORDERS_PER_CLIENT_PER_DAY`.
    pub unpaid_limit: u64,
}

impl<'a> Ordering<'a> {
    pub fn of(state: &'a AppState) -> Self {
        Self {
            pool: &state.pool,
            auth: &state.auth,
            point_enabled: state.flags.point_orders,
            unpaid_limit: state.limits.unpaid_orders_per_day,
        }
    }
}

/// What the checks before the write found.
struct Checked {
    offer: Offer,
    occasion: Option<OccasionRow>,
    /// The points the payer is charged at once (`point`); `None` for `checkout`.
    charge: Option<BigDecimal>,
}

/// Creates the order, or answers the one a replayed `Idempotency-Key` made.
pub async fn create(
    ordering: &Ordering<'_>,
    caller: i64,
    request: &OrderRequest,
    key: Option<&str>,
) -> Result<OrderView, PointError> {
    let claim = key.map(|key| Claim {
        caller,
        key,
        fingerprint: request.fingerprint(),
    });
    if let Some(claim) = &claim {
        let mut conn = ordering.pool.get().await?;
        if let Some(order) = claim.replay(&mut conn).await? {
            return Ok(order);
        }
    }
    let checked = match request.payment_type {
        PaymentType::Point => paid_with_points(ordering, caller, request).await?,
        PaymentType::Checkout => check(ordering, request).await?,
    };
    let mut conn = ordering.pool.get().await?;
    let correlation_id = Uuid::new_v4();
    let outcome = conn
        .transaction::<_, PointError, _>(async |conn| {
            if let Some(claim) = &claim
                && !claim.take(conn, correlation_id).await?
            {
                return Ok(None);
            }
            if checked.charge.is_none() {
                check_unpaid(conn, caller, ordering.unpaid_limit).await?;
            }
            save(conn, caller, request, &checked, correlation_id).await?;
            Ok(Some(super::view(conn, correlation_id).await?))
        })
        .await?;
    match (outcome, claim) {
        (Some(order), _) => {
            tracing::info!(
                order.id = %correlation_id,
                client.id = caller,
                payment_type = request.payment_type.as_str(),
                "point order created"
            );
            Ok(order)
        }
        // Another request with the same key won the race: answer its order.
        (None, Some(claim)) => claim
            .replay(&mut conn)
            .await?
            .ok_or_else(|| PointError::Internal("idempotency key vanished".into())),
        (None, None) => Err(PointError::Internal("no key but no order".into())),
    }
}

/// `point`: the flag and self-payment, the shared checks, then the offer's points price and
/// the payer's profile.
async fn paid_with_points(
    ordering: &Ordering<'_>,
    caller: i64,
    request: &OrderRequest,
) -> Result<Checked, PointError> {
    if !ordering.point_enabled {
        return Err(OrderRefusal::PointPaymentDisabled.into());
    }
    if request.to_client_id == caller {
        return Err(OrderRefusal::SelfPayment.into());
    }
    let checked = check(ordering, request).await?;
    let Some(price) = checked.offer.purchased_point_amount.clone() else {
        return Err(OrderRefusal::NotPayableWithPoints(checked.offer.id).into());
    };
    if ordering.auth.client(caller).await?.is_none() {
        return Err(PayerRefusal::UnknownPayer(caller).into());
    }
    Ok(Checked {
        charge: Some(price),
        ..checked
    })
}

/// Offer, recipient, occasion — in that order.
async fn check(ordering: &Ordering<'_>, request: &OrderRequest) -> Result<Checked, PointError> {
    let offer = {
        let mut conn = ordering.pool.get().await?;
        offers::find_active(&mut conn, &request.point_offer_id).await?
    };
    if ordering.auth.client(request.to_client_id).await?.is_none() {
        return Err(OrderRefusal::UnknownRecipient(request.to_client_id).into());
    }
    let occasion = match &request.point_occasion_id {
        None => None,
        Some(id) => {
            let mut conn = ordering.pool.get().await?;
            Some(offers::find_active_occasion(&mut conn, id).await?)
        }
    };
    Ok(Checked {
        offer,
        occasion,
        charge: None,
    })
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
        .filter(point_orders::status.eq(Status::Open))
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
        return Err(PointError::Limited(
            OrderRefusal::TooManyUnpaid(limit).into(),
            RetryAfter::seconds(wait),
        ));
    }
    Ok(())
}

/// Writes the order; with a charge, takes it from the payer and credits the recipient with
/// the offer's points.
async fn save(
    conn: &mut AsyncPgConnection,
    caller: i64,
    request: &OrderRequest,
    checked: &Checked,
    correlation_id: Uuid,
) -> Result<(), PointError> {
    let offer = &checked.offer;
    let accounts = match &checked.charge {
        Some(price) => {
            let mut accounts = ledger::lock_accounts(conn, &[caller, request.to_client_id])
                .await?
                .into_iter();
            match (accounts.next(), accounts.next()) {
                (Some(payer), Some(recipient)) if payer.balance() >= price => {
                    Some((payer, recipient, price))
                }
                _ => return Err(OrderRefusal::InsufficientPoints(caller).into()),
            }
        }
        None => None,
    };
    diesel::insert_into(point_orders::table)
        .values((
            point_orders::correlation_id.eq(correlation_id),
            point_orders::payer_id.eq(caller),
            point_orders::recipient_id.eq(request.to_client_id),
            point_orders::point_offer_id.eq(&offer.id),
            point_orders::status.eq(if accounts.is_some() {
                Status::Successful
            } else {
                Status::Open
            }),
            point_orders::point_amount.eq(&offer.point_amount),
            point_orders::purchased_point_amount.eq(&offer.purchased_point_amount),
            point_orders::money_amount.eq(&offer.amount),
            point_orders::payment_type.eq(request.payment_type),
            point_orders::order_type.eq(if checked.occasion.is_some() {
                OrderType::Gift
            } else {
                OrderType::Transfer
            }),
            point_orders::point_occasion_id.eq(checked.occasion.as_ref().map(|o| o.id.as_str())),
            point_orders::occasion.eq(&request.occasion),
        ))
        .execute(conn)
        .await?;
    if let Some((mut payer, mut recipient, price)) = accounts {
        ledger::append(
            conn,
            &mut payer,
            Entry {
                kind: Kind::GiftSent,
                points: -price.clone(),
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
