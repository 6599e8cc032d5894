//! The money paths as the app and the payment service drive them (a point order, a card
//! order captured by the signed webhook, a gift-code redemption), for tests that run them
//! through other topologies: replicas behind a balancer, PgBouncer.

use serde_json::{Value, json};

use crate::demo;
use crate::stack::call;

/// The demo fixture's active clients and their legacy tokens (`crate::demo`).
pub const CLIENTS: [(i64, &str); 5] = [
    (1001, demo::SARA),
    (1002, demo::OMAR),
    (1003, demo::NOURA),
    (1004, demo::FAHAD),
    (1005, demo::REEM),
];
/// The demo fixture's 100-point offer (15.00 SAR).
pub const OFFER: &str = demo::OFFER_100;

/// Gives every client in [`CLIENTS`] `points` more points (an adjustment entry each).
pub async fn fund(points_db: &str, points: u64) {
    use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
    let ids = CLIENTS
        .iter()
        .map(|(id, _)| id.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let mut conn = AsyncPgConnection::establish(points_db).await.unwrap();
    conn.batch_execute(&format!(
        "BEGIN;
         INSERT INTO point_accounts (client_id) SELECT unnest(ARRAY[{ids}]) ON CONFLICT DO NOTHING;
         INSERT INTO point_entries (client_id, kind, points) SELECT unnest(ARRAY[{ids}]), 'adjustment', {points};
         UPDATE point_accounts SET balance = balance + {points} WHERE client_id IN ({ids});
         COMMIT;"
    ))
    .await
    .unwrap();
}

/// Adds active gift codes `<prefix>-0000` to `<prefix>-<n-1>`, worth `points` each.
pub async fn add_gift_codes(catalog_db: &str, prefix: &str, n: usize, points: &str) {
    use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
    let mut conn = AsyncPgConnection::establish(catalog_db).await.unwrap();
    conn.batch_execute(&format!(
        "INSERT INTO gift_card_codes (code, points, active)
         SELECT '{prefix}-' || lpad(g::text, 4, '0'), {points}, true FROM generate_series(0, {}) g",
        n - 1
    ))
    .await
    .unwrap();
}

/// The payment service's `X-Signature` for `body`, signed now under the development
/// secret (`scripts/dev.env`).
pub fn signature(body: &str) -> String {
    testkit::tokens::webhook_signature(
        crate::dev("PAYMENT_WEBHOOK_SECRET"),
        testkit::tokens::now(),
        body,
    )
}

/// A point order paid with points for `friend`, under Idempotency-Key `key`.
pub async fn point_order(
    http: &reqwest::Client,
    order: &str,
    token: &str,
    friend: i64,
    key: &str,
) -> (u16, Value) {
    let body = json!({"point_offer_id": OFFER, "to_client_id": friend, "payment_type": "point"});
    call(
        http,
        "POST",
        &format!("{order}/api/v2/client/point-orders"),
        Some(token),
        &[("Idempotency-Key", key)],
        Some(&body),
    )
    .await
}

/// Sends a signed webhook event to the point service at `points`; its status and body.
pub async fn send_event(http: &reqwest::Client, points: &str, event: &Value) -> (u16, String) {
    let body = event.to_string();
    let response = http
        .post(format!("{points}/webhooks/v1/payments"))
        .header("content-type", "application/json")
        .header("x-signature", signature(&body))
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// A `payment_captured` (or other `kind`) event for `order` (as created) and `payment`.
pub fn event(id: &str, kind: &str, order: &Value, payment: &str) -> Value {
    let money: domain::Money = order["money_amount"].as_str().unwrap().parse().unwrap();
    json!({"id": id, "type": kind, "data": {
        "reference": order["correlation_id"], "payment_id": payment, "provider": "e2e",
        "amount_minor": money.minor_units().unwrap(), "currency": "SAR"}})
}

/// A checkout order for Sara paid by `token` with a card through the payment sandbox, its
/// payment waiting on the 3-D Secure page: `(order as created, payment id)`. Panics on any
/// answer but 200.
pub async fn card_order(http: &reqwest::Client, order: &str, token: &str) -> (Value, String) {
    let orders = format!("{order}/api/v2/client/point-orders");
    let body = json!({"point_offer_id": OFFER, "to_client_id": 1001, "payment_type": "checkout"});
    let (status, created) = call(http, "POST", &orders, Some(token), &[], Some(&body)).await;
    assert_eq!(status, 200, "checkout order: {created}");
    let id = created["correlation_id"].as_str().unwrap();
    let (status, started) = call(
        http,
        "POST",
        &format!("{orders}/{id}/pay/card"),
        Some(token),
        &[],
        Some(&json!({"id": "card_e2e", "cvv": "123"})),
    )
    .await;
    assert_eq!(status, 200, "pay/card: {started}");
    let payment = started["id"].as_str().unwrap().to_owned();
    (created, payment)
}

/// The order `id` as its payer `token` sees it.
pub async fn order_status(http: &reqwest::Client, order: &str, token: &str, id: &str) -> Value {
    let (status, body) = call(
        http,
        "GET",
        &format!("{order}/api/v2/client/point-orders/{id}"),
        Some(token),
        &[],
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body
}

/// Redeems gift code `code` as `token`.
pub async fn redeem(http: &reqwest::Client, order: &str, token: &str, code: &str) -> (u16, Value) {
    call(
        http,
        "POST",
        &format!("{order}/api/v2/client/gift-card-code"),
        Some(token),
        &[],
        Some(&json!({"code": code})),
    )
    .await
}

/// `client`'s balance as the app reads it (`points` of `GET /api/v2/client/points`).
pub async fn balance(http: &reqwest::Client, order: &str, token: &str) -> Value {
    let (status, body) = call(
        http,
        "GET",
        &format!("{order}/api/v2/client/points"),
        Some(token),
        &[],
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["points"].clone()
}

/// One number of a query on `url` (`SELECT count(*) AS n ...`).
pub async fn count(url: &str, sql: &str) -> i64 {
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = AsyncPgConnection::establish(url).await.unwrap();
    diesel::sql_query(sql)
        .get_result::<N>(&mut conn)
        .await
        .unwrap()
        .n
}
