//! The pay routes' rules (no HTTP in here): the checks in the spec's order (and, after the
//! status, the lapse and the offer's price), as the contract
//! documents them (`relayed_routes::pay::pay_point_order_by_card`), and the payment attempt. The pay routes
//! never move the order; the webhook does. Each call is a payment attempt of the order
//! (`attempts`), recorded before the payment service is asked (the order's status checked
//! again under its lock) and again with the answer, with no connection held in between.

use std::time::Duration;

use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use relayed_routes::orders::{OrderLookupRefusal, PayerRefusal};
use relayed_routes::pay::PayRefusal;
use uuid::Uuid;

use super::OrderRow;
use super::PaymentType;
use crate::clients::auth::AuthClient;
use crate::db::schema::point_offers;
use crate::error::PointError;
use crate::payments::attempts;
use crate::payments::client::Accepted;
use crate::payments::client::PaymentClient;
use crate::payments::machine::Status;
use crate::state::AppState;

/// What paying an order needs besides the request. Each database step takes a connection of
/// its own and gives it back: none is held while the auth or the payment service is asked.
pub struct Paying<'a> {
    pub pool: &'a db::Pool,
    pub auth: &'a AuthClient,
    pub payments: &'a PaymentClient,
    /// `POINT_ORDER_CARD_ENABLED`.
    pub card_enabled: bool,
    /// How long a pay call's attempt counts as in flight (`attempts::in_flight_window`).
    pub attempt_window: Duration,
    /// `PAYMENT_ATTEMPTS_PER_ORDER`.
    pub attempts_per_order: u64,
    /// `PAYMENT_SYNC_AFTER_SECONDS`: when an attempt's order is synced if no event came.
    pub sync_after: Duration,
    /// `UNPAID_ORDER_LAPSE_HOURS`.
    pub lapse_hours: u64,
}

impl<'a> Paying<'a> {
    pub fn of(state: &'a AppState) -> Self {
        Self {
            pool: &state.pool,
            auth: &state.auth,
            payments: &state.payments,
            card_enabled: state.flags.card_payments,
            attempt_window: state.attempt_window,
            attempts_per_order: state.limits.attempts_per_order,
            sync_after: state.sync.after,
            lapse_hours: state.limits.unpaid_order_lapse_hours,
        }
    }
}

/// The caller's order, if they may pay it now, and its amount in halalas.
pub async fn payable(
    paying: &Paying<'_>,
    caller: i64,
    raw_id: &str,
) -> Result<(OrderRow, i64), PointError> {
    if !paying.card_enabled {
        return Err(PayRefusal::CardPaymentDisabled.into());
    }
    let correlation_id = raw_id
        .parse::<Uuid>()
        .map_err(|_| OrderLookupRefusal::OrderNotFound)?;
    // One connection for the order's checks, given back before the auth service is asked.
    let order = {
        let mut conn = paying.pool.get().await?;
        let order = super::payers_order(&mut conn, correlation_id, caller).await?;
        if order.payment_type != PaymentType::Checkout {
            return Err(PayRefusal::NotCheckout(correlation_id).into());
        }
        if !paying.payments.is_configured() {
            return Err(PointError::Internal("PAYMENT_SERVICE_URL not set".into()));
        }
        if order.status != Status::Open {
            return Err(not_payable(correlation_id, order.status));
        }
        still_sold(&mut conn, &order, paying.lapse_hours).await?;
        order
    };
    if paying.auth.client(caller).await?.is_none() {
        return Err(PayerRefusal::UnknownPayer(caller).into());
    }
    let minor = crate::numbers::amount_minor(&order.money_amount)
        .ok_or(PayRefusal::NoAmountToPay(correlation_id))?;
    Ok((order, minor))
}

/// `Lapsed` when the order was made longer ago than `UNPAID_ORDER_LAPSE_HOURS`;
/// `OfferChanged` when its offer is withdrawn, off sale, or gives other points or asks
/// another price than the order says: a checkout order is paid at its offer's price of now
/// or not at all, so an order kept unpaid cannot buy an offer at a price since taken back.
/// Asked in the spec's order before the payer's profile, and again with the attempt
/// ([`attempt`]), under the order's lock and with the offer's row shared: the back office's
/// change of the offer (which holds it for update) comes wholly before the attempt or after.
pub(crate) async fn still_sold(
    conn: &mut AsyncPgConnection,
    order: &OrderRow,
    lapse_hours: u64,
) -> Result<(), PointError> {
    let id = order.correlation_id;
    let lapse = chrono::Duration::hours(i64::try_from(lapse_hours).unwrap_or(i64::MAX));
    if order.created_at + lapse <= chrono::Utc::now() {
        return Err(PayRefusal::Lapsed(id, lapse_hours).into());
    }
    let Some(offer_id) = &order.point_offer_id else {
        return Ok(());
    };
    let sold: Option<(BigDecimal, BigDecimal)> = point_offers::table
        .find(offer_id)
        .filter(point_offers::active.and(point_offers::deleted.eq(false)))
        .select((point_offers::point_amount, point_offers::amount))
        .for_share()
        .first(conn)
        .await
        .optional()?;
    match sold {
        Some((points, amount)) if points == order.point_amount && amount == order.money_amount => {
            Ok(())
        }
        _ => Err(PayRefusal::OfferChanged(id).into()),
    }
}

/// The refusal of an order that is no longer payable.
fn not_payable(correlation_id: Uuid, status: Status) -> PointError {
    match status {
        Status::PaymentFailed => PayRefusal::PaymentFailed(correlation_id),
        _ => PayRefusal::AlreadyPaid(correlation_id),
    }
    .into()
}

/// Asks the payment service through `call`, with the attempt recorded on both sides of the
/// call and no connection held during it. The order is checked again under its lock when
/// the attempt is recorded: a decline or capture may have finished it since [`payable`],
/// its offer been changed, or its time run out.
pub async fn attempt<F>(
    paying: &Paying<'_>,
    order: &OrderRow,
    kind: attempts::Kind,
    call: F,
) -> Result<Accepted, PointError>
where
    F: AsyncFnOnce() -> Result<Accepted, PointError>,
{
    let correlation_id = order.correlation_id;
    let attempt = {
        let mut conn = paying.pool.get().await?;
        attempts::start(
            &mut conn,
            order,
            kind,
            paying.attempt_window,
            paying.attempts_per_order,
            paying.sync_after,
            paying.lapse_hours,
        )
        .await?
    }
    .map_err(|status| not_payable(correlation_id, status))?;
    let result = call().await;
    let answer = match &result {
        Ok(accepted) => match accepted.json["id"].as_str().filter(|id| !id.is_empty()) {
            Some(id) => attempts::Answer::Answered(id.to_owned()),
            None => attempts::Answer::Lost,
        },
        Err(PointError::PaymentRefused { .. }) => attempts::Answer::Refused,
        Err(PointError::PaymentNotSent(_)) => attempts::Answer::NotSent,
        Err(_) => attempts::Answer::Lost,
    };
    let recorded = match paying.pool.get().await {
        Ok(mut conn) => attempts::finish(&mut conn, correlation_id, attempt, &answer).await,
        Err(e) => Err(e.into()),
    };
    if let Err(e) = recorded {
        // The payment exists whatever we failed to write: the client still gets its 3-D
        // Secure step. The attempt stays `started` and counts as lost once its window has
        // passed, which the webhook's rules handle.
        tracing::error!(
            order.id = %correlation_id,
            attempt.id = attempt,
            error.message = %e,
            "payment attempt's answer not recorded"
        );
    }
    result
}
