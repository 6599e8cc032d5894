//! One batch of point orders paid with points, written in one transaction: the keys claimed,
//! the accounts locked, each order's balance check applied in turn, then every order, entry
//! and balance of the batch written in a few statements. Each order is all-or-nothing: one
//! that would overdraw its payer is refused alone and leaves no order, entry or key (the
//! accounts the batch made for its clients stay, at zero, as any first order makes them).

use std::collections::HashMap;

use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use relayed_routes::orders::{OrderRefusal, OrderView};

use super::{PointOrder, Settled};
use crate::db::schema::point_orders;
use crate::error::PointError;
use crate::ledger::{self, Entry, Kind};
use crate::orders::idempotency;
use crate::orders::{NewOrder, OrderType, PaymentType, Status, ViewRow};

/// What became of each order of the batch, in the batch's order.
pub type Outcomes = Vec<Result<Settled, PointError>>;

/// Writes `orders` in the caller's transaction and says what became of each. An error is the
/// whole batch's (the transaction must roll back); a refusal is the order's own. An order
/// whose key an earlier one of the batch took is `KeyTaken`, and finds that one's order.
pub async fn batch(conn: &mut AsyncPgConnection, orders: &[&PointOrder]) -> QueryResult<Outcomes> {
    let claims: Vec<_> = orders
        .iter()
        .filter_map(|order| order.claim.as_ref().map(|c| (c, order.correlation_id)))
        .collect();
    let mut taken = idempotency::take_all(conn, &claims).await?.into_iter();
    // Whether each order holds its key (an order without one holds nothing to lose).
    let holds_key: Vec<bool> = orders
        .iter()
        .map(|order| order.claim.is_none() || taken.next().unwrap_or(false))
        .collect();

    let mut clients: Vec<i64> = orders
        .iter()
        .zip(&holds_key)
        .filter(|(_, holds)| **holds)
        .flat_map(|(order, _)| [order.payer, order.recipient])
        .collect();
    clients.sort_unstable();
    clients.dedup();
    let mut accounts = ledger::lock_accounts(conn, &clients).await?;
    let mut balances: HashMap<i64, BigDecimal> = accounts
        .iter()
        .map(|account| (account.client_id(), account.balance().clone()))
        .collect();

    // The balance checks in the batch's order, each on the balances the orders before it left.
    let mut outcomes: Vec<Option<Result<Settled, PointError>>> = Vec::with_capacity(orders.len());
    let mut made = Vec::new();
    let mut released = Vec::new();
    for (order, holds) in orders.iter().zip(holds_key) {
        if !holds {
            outcomes.push(Some(Ok(Settled::KeyTaken)));
            continue;
        }
        let payer = balances.get(&order.payer).cloned().unwrap_or_default();
        if payer < order.price {
            outcomes.push(Some(Err(
                OrderRefusal::InsufficientPoints(order.payer).into()
            )));
            released.extend(order.claim.as_ref());
            continue;
        }
        balances.insert(order.payer, payer - &order.price);
        *balances.entry(order.recipient).or_default() += &order.offer.point_amount;
        made.push(*order);
        outcomes.push(None);
    }
    idempotency::release_all(conn, &released).await?;

    let mut views = insert_orders(conn, &made).await?;
    let entries = made
        .iter()
        .flat_map(|order| {
            [
                (
                    order.payer,
                    entry(Kind::GiftSent, -order.price.clone(), order),
                ),
                (
                    order.recipient,
                    entry(Kind::GiftReceived, order.offer.point_amount.clone(), order),
                ),
            ]
        })
        .collect();
    ledger::append_all(conn, &mut accounts, entries).await?;

    Ok(orders
        .iter()
        .zip(outcomes)
        .map(|(order, outcome)| {
            outcome.unwrap_or_else(|| {
                views
                    .remove(&order.correlation_id)
                    .map(|view| Settled::Made(Box::new(view)))
                    .ok_or_else(|| PointError::Internal("a written order was not returned".into()))
            })
        })
        .collect())
}

fn entry(kind: Kind, points: BigDecimal, order: &PointOrder) -> Entry<'static> {
    Entry {
        kind,
        points,
        order: Some(order.correlation_id),
        reference: None,
        at: None,
    }
}

/// Inserts the orders, successful, in one statement; their views by id.
async fn insert_orders(
    conn: &mut AsyncPgConnection,
    orders: &[&PointOrder],
) -> QueryResult<HashMap<uuid::Uuid, OrderView>> {
    if orders.is_empty() {
        return Ok(HashMap::new());
    }
    let rows: Vec<NewOrder<'_>> = orders
        .iter()
        .map(|order| NewOrder {
            correlation_id: order.correlation_id,
            payer_id: order.payer,
            recipient_id: order.recipient,
            point_offer_id: &order.offer.id,
            status: Status::Successful,
            point_amount: &order.offer.point_amount,
            purchased_point_amount: order.offer.purchased_point_amount.as_ref(),
            money_amount: &order.offer.amount,
            payment_type: PaymentType::Point,
            order_type: if order.occasion_id.is_some() {
                OrderType::Gift
            } else {
                OrderType::Transfer
            },
            point_occasion_id: order.occasion_id.as_deref(),
            occasion: order.occasion.as_deref(),
        })
        .collect();
    let views: Vec<ViewRow> = diesel::insert_into(point_orders::table)
        .values(rows)
        .returning(ViewRow::as_returning())
        .get_results(conn)
        .await?;
    Ok(views
        .into_iter()
        .map(|row| (row.correlation_id, OrderView::from(row)))
        .collect())
}
