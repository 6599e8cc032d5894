//! Point orders (no HTTP in here): reading them, the gift message, and the rules of making
//! one (`create`, with its `idempotency` key; one paid with points is written by the
//! `batches`) and of paying one (`payable`).

pub mod batches;
mod create;
mod idempotency;
pub mod payable;
mod states;

use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use relayed_routes::orders::{OrderLookupRefusal, OrderView};
use uuid::Uuid;

pub use batches::{BatchSettings, Batcher};
pub use create::{Ordering, create};
pub use idempotency::IDEMPOTENCY_WINDOW;
pub use states::{OrderType, PaymentStatus, PaymentType, Status};

use crate::db::schema::point_orders;
use crate::error::PointError;

/// The columns of an [`OrderView`], read by name (the wire type carries no diesel mapping).
#[derive(Queryable, Selectable)]
#[diesel(table_name = point_orders)]
struct ViewRow {
    correlation_id: Uuid,
    order_no: Option<i64>,
    status: Status,
    payment_status: Option<PaymentStatus>,
    point_amount: BigDecimal,
    purchased_point_amount: Option<BigDecimal>,
    money_amount: BigDecimal,
    payment_type: PaymentType,
    order_type: OrderType,
}

/// A new order's columns; the others take their defaults (`order_no`, the times).
#[derive(Insertable)]
#[diesel(table_name = point_orders)]
struct NewOrder<'a> {
    correlation_id: Uuid,
    payer_id: i64,
    recipient_id: i64,
    point_offer_id: &'a str,
    status: Status,
    point_amount: &'a BigDecimal,
    purchased_point_amount: Option<&'a BigDecimal>,
    money_amount: &'a BigDecimal,
    payment_type: PaymentType,
    order_type: OrderType,
    point_occasion_id: Option<&'a str>,
    occasion: Option<&'a str>,
}

impl From<ViewRow> for OrderView {
    fn from(row: ViewRow) -> Self {
        Self {
            correlation_id: row.correlation_id,
            order_no: row.order_no,
            status: row.status.as_str().to_owned(),
            payment_status: row.payment_status.map(|status| status.as_str().to_owned()),
            point_amount: row.point_amount,
            purchased_point_amount: row.purchased_point_amount,
            money_amount: row.money_amount,
            payment_type: row.payment_type.as_str().to_owned(),
            order_type: row.order_type.as_str().to_owned(),
        }
    }
}

/// An order with what the pay routes and the webhook need besides the nine keys.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = point_orders)]
pub struct OrderRow {
    pub correlation_id: Uuid,
    pub payer_id: i64,
    pub recipient_id: i64,
    pub status: Status,
    pub point_amount: BigDecimal,
    pub money_amount: BigDecimal,
    pub payment_type: PaymentType,
    /// None on an order copied from the legacy system without one.
    pub point_offer_id: Option<String>,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

pub async fn view(conn: &mut AsyncPgConnection, correlation_id: Uuid) -> QueryResult<OrderView> {
    point_orders::table
        .find(correlation_id)
        .select(ViewRow::as_select())
        .first(conn)
        .await
        .map(OrderView::from)
}

/// An order the caller may see (as payer or recipient); anyone else gets the same 404.
pub async fn visible_to(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
    caller: i64,
) -> Result<OrderView, PointError> {
    let row = point_orders::table
        .find(correlation_id)
        .filter(
            point_orders::payer_id
                .eq(caller)
                .or(point_orders::recipient_id.eq(caller)),
        )
        .select(ViewRow::as_select())
        .first::<ViewRow>(conn)
        .await
        .optional()?;
    row.map(OrderView::from)
        .ok_or_else(|| OrderLookupRefusal::OrderNotFound.into())
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
        .ok_or_else(|| OrderLookupRefusal::OrderNotFound.into())
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
