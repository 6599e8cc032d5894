//! `POST /point-orders`: each payment type's checks around the shared ones (offer, recipient,
//! occasion), in the spec's order as the contract documents them
//! (`relayed_routes::orders::create_point_order`), then the order written once per idempotency
//! key: paid with points, in its batcher's next batch (`batches`); `checkout`, in a
//! transaction of its own. The remote checks (recipient, payer) run before either, so no
//! transaction waits on another service.

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use envelope::RetryAfter;
use relayed_routes::offers::Offer;
use relayed_routes::orders::{OrderRefusal, OrderView, PayerRefusal};
use uuid::Uuid;

use super::batches::{Batcher, PointOrder, Settled};
use super::idempotency::{self, Claim};
use super::{NewOrder, OrderType, PaymentType, Status};
use crate::clients::auth::AuthClient;
use crate::db::schema::point_orders;
use crate::error::PointError;
use crate::offers::{self, OccasionRow};
use crate::order_body::OrderRequest;
use crate::state::AppState;

/// How far back unpaid `checkout` orders count against `UNPAID_ORDERS_PER_CLIENT_PER_DAY`.
const UNPAID_WINDOW: Duration = Duration::hours(24);

/// What creating an order needs besides the request. Each database step takes a connection
/// of its own and gives it back: none is held while the auth service is asked.
pub struct Ordering<'a> {
    pub pool: &'a db::Pool,
    pub auth: &'a AuthClient,
    /// Writes the orders paid with points.
    pub batcher: &'a Batcher,
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
            batcher: &state.batcher,
            point_enabled: state.flags.point_orders,
            unpaid_limit: state.limits.unpaid_orders_per_day,
        }
    }
}

/// What the checks before the write found.
struct Checked {
    offer: Offer,
    occasion: Option<OccasionRow>,
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
        key: key.to_owned(),
        fingerprint: request.fingerprint(),
    });
    if let Some(claim) = &claim {
        let mut conn = ordering.pool.get().await?;
        if let Some(order) = claim.replay(&mut conn).await? {
            return Ok(order);
        }
    }
    let correlation_id = Uuid::new_v4();
    let checked = match request.payment_type {
        PaymentType::Point => {
            Ready::Points(paid_with_points(ordering, caller, request, correlation_id).await?)
        }
        PaymentType::Checkout => Ready::Checkout(check(ordering, request).await?),
    };
    for _ in 0..KEY_TRIES {
        let settled = match &checked {
            Ready::Points(order) => {
                let order = PointOrder {
                    claim: claim.clone(),
                    ..order.clone()
                };
                ordering.batcher.settle(order).await?
            }
            Ready::Checkout(checked) => {
                let order = Unpaid {
                    caller,
                    request,
                    checked,
                    correlation_id,
                };
                order.write(ordering, claim.as_ref()).await?
            }
        };
        let key_holder = match settled {
            Settled::Made(order) => {
                tracing::info!(
                    order.id = %correlation_id,
                    client.id = caller,
                    payment_type = request.payment_type.as_str(),
                    "point order created"
                );
                return Ok(*order);
            }
            Settled::KeyTaken => claim
                .as_ref()
                .ok_or_else(|| PointError::Internal("a key was taken but none was sent".into()))?,
        };
        // Another request with the same key won the race: answer its order. If it has none,
        // that request was refused and let the key go: this one is decided afresh.
        let mut conn = ordering.pool.get().await?;
        if let Some(order) = key_holder.replay(&mut conn).await? {
            return Ok(order);
        }
    }
    // Each round decides at least one request under the key: this many copies sent at once
    // were each refused in turn. Busy (503): the key is free, a retry is decided afresh.
    Err(PointError::Busy(
        "the idempotency key was contested by many requests at once".into(),
    ))
}

/// How often a request whose key another holds looks for that one's order, or tries again.
const KEY_TRIES: usize = 8;

/// A request past its checks, ready to write.
enum Ready {
    Points(PointOrder),
    Checkout(Checked),
}

/// `point`: the flag and self-payment, the shared checks, then the offer's points price and
/// the payer's profile. What is left, the balance, the batcher checks under the lock.
async fn paid_with_points(
    ordering: &Ordering<'_>,
    caller: i64,
    request: &OrderRequest,
    correlation_id: Uuid,
) -> Result<PointOrder, PointError> {
    if !ordering.point_enabled {
        return Err(OrderRefusal::PointPaymentDisabled.into());
    }
    if request.to_client_id == caller {
        return Err(OrderRefusal::SelfPayment.into());
    }
    let Checked { offer, occasion } = check(ordering, request).await?;
    let Some(price) = offer.purchased_point_amount.clone() else {
        return Err(OrderRefusal::NotPayableWithPoints(offer.id).into());
    };
    if ordering.auth.client(caller).await?.is_none() {
        return Err(PayerRefusal::UnknownPayer(caller).into());
    }
    Ok(PointOrder {
        correlation_id,
        payer: caller,
        recipient: request.to_client_id,
        offer,
        price,
        occasion_id: occasion.map(|row| row.id),
        occasion: request.occasion.clone(),
        claim: None,
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
    Ok(Checked { offer, occasion })
}

/// A `checkout` order, checked: it charges nothing until it is paid.
struct Unpaid<'a> {
    caller: i64,
    request: &'a OrderRequest,
    checked: &'a Checked,
    correlation_id: Uuid,
}

impl Unpaid<'_> {
    /// Writes the order in a transaction of its own, within the payer's bound on unpaid orders.
    async fn write(
        &self,
        ordering: &Ordering<'_>,
        claim: Option<&Claim>,
    ) -> Result<Settled, PointError> {
        let mut conn = ordering.pool.get().await?;
        conn.transaction::<_, PointError, _>(async |conn| {
            if let Some(claim) = claim
                && idempotency::take_all(conn, &[(claim, self.correlation_id)]).await? != [true]
            {
                return Ok(Settled::KeyTaken);
            }
            check_unpaid(conn, self.caller, ordering.unpaid_limit).await?;
            self.insert(conn).await?;
            Ok(Settled::Made(Box::new(
                super::view(conn, self.correlation_id).await?,
            )))
        })
        .await
    }

    async fn insert(&self, conn: &mut AsyncPgConnection) -> Result<(), PointError> {
        let offer = &self.checked.offer;
        diesel::insert_into(point_orders::table)
            .values(NewOrder {
                correlation_id: self.correlation_id,
                payer_id: self.caller,
                recipient_id: self.request.to_client_id,
                point_offer_id: &offer.id,
                status: Status::Open,
                point_amount: &offer.point_amount,
                purchased_point_amount: offer.purchased_point_amount.as_ref(),
                money_amount: &offer.amount,
                payment_type: PaymentType::Checkout,
                order_type: if self.checked.occasion.is_some() {
                    OrderType::Gift
                } else {
                    OrderType::Transfer
                },
                point_occasion_id: self.checked.occasion.as_ref().map(|o| o.id.as_str()),
                occasion: self.request.occasion.as_deref(),
            })
            .execute(conn)
            .await?;
        Ok(())
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
