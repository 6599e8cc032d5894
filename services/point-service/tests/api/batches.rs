//! Batched point orders (`orders::batches`): point orders paid with points that wait for
//! their batcher are written in one transaction, each still all-or-nothing and answered on
//! its own.
//!
//! A batch is made on purpose, never by luck of timing: the test holds Sara's account row, so
//! the one batcher's batch with Sara's order waits on it (PostgreSQL shows the wait); the
//! orders sent next queue behind it one at a time (the service's queue gauge shows each); when
//! the test lets go, they are the next batch, in the order they were sent.
//!
//! These tests read the process's metrics (`testkit::metrics::alone_in_the_process`).

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use futures_util::future::join_all;
use point_service::config::BatchSettings;
use point_service::reports::audit;
use serde_json::{Value, json};

use crate::helpers::*;

const QUEUED: &str = "point_order_batch_queue";

/// One batcher per replica, so that every payer's orders meet in it (the default, said here
/// because these tests rely on it).
fn one_lane() -> Options {
    Options {
        batches: BatchSettings {
            lanes: 1,
            ..BatchSettings::default()
        },
        ..Options::default()
    }
}

/// A client's account row held by a transaction of the test's own.
struct Held(AsyncPgConnection);

impl Held {
    async fn account(app: &TestApp, client: i64) -> Self {
        let mut conn = AsyncPgConnection::establish(app.database.url())
            .await
            .unwrap();
        conn.batch_execute(&format!(
            "BEGIN; SELECT 1 FROM point_accounts WHERE client_id = {client} FOR UPDATE"
        ))
        .await
        .unwrap();
        Self(conn)
    }

    async fn release(mut self) {
        self.0.batch_execute("ROLLBACK").await.unwrap();
    }
}

/// Waits until a session of the app's database waits for a lock on the accounts.
async fn a_batch_waits_on_the_held_account(app: &TestApp) {
    let waiting = "SELECT count(*) AS n FROM pg_stat_activity \
         WHERE datname = current_database() AND wait_event_type = 'Lock' \
           AND query ILIKE '%point_accounts%'";
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while app.count(waiting).await == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no batch waits on the held account"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// `POST /point-orders` with an `Idempotency-Key`, on a task of its own.
fn order_with_key(
    app: &TestApp,
    payer: i64,
    key: &str,
    body: &Value,
) -> tokio::task::JoinHandle<(u16, Value)> {
    let sent = app
        .client
        .post(app.url(&paths::orders()))
        .bearer_auth(token(payer))
        .header("idempotency-key", key)
        .json(body)
        .send();
    tokio::spawn(async move { answer(sent.await.unwrap()).await })
}

/// Gives `client` exactly `points` points (their account made or reset), as the seed would.
async fn give(app: &TestApp, client: i64, points: &str) {
    app.sql(&format!(
        "INSERT INTO point_accounts (client_id) VALUES ({client}) ON CONFLICT DO NOTHING; \
         INSERT INTO point_entries (client_id, kind, points) VALUES ({client}, 'earn', {points}); \
         UPDATE point_accounts SET balance = balance + {points} WHERE client_id = {client}"
    ))
    .await;
}

/// Sends `orders` (payer, key, body) so that they form one batch, and answers theirs in the
/// same order. Sara's order to Omar is the batch before theirs, held on her account first.
async fn in_one_batch(app: &TestApp, orders: &[(i64, &str, Value)]) -> Vec<(u16, Value)> {
    let held = Held::account(app, SARA).await;
    let to_omar = order_body(OMAR, "point");
    let before = app.order(SARA, &to_omar);
    let ours = async {
        a_batch_waits_on_the_held_account(app).await;
        let mut sent = Vec::new();
        for (n, (payer, key, body)) in orders.iter().enumerate() {
            sent.push(order_with_key(app, *payer, key, body));
            // Queued before the next is sent, so the next queues behind it.
            testkit::metrics::wait_for(&app.client, &app.base, QUEUED, (n + 1) as f64).await;
        }
        held.release().await;
        join_all(sent)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect::<Vec<_>>()
    };
    let (before, ours) = tokio::join!(before, ours);
    assert_eq!(before.0, 200, "{}", before.1);
    ours
}

fn batch_sizes(text: &str) -> (f64, f64) {
    let value = |series| testkit::metrics::value(text, series).unwrap_or(0.0);
    (
        value("point_order_batch_size_count"),
        value("point_order_batch_size_sum"),
    )
}

#[tokio::test]
async fn an_order_that_would_overdraw_inside_a_batch_fails_alone_and_frees_its_key() {
    testkit::metrics::alone_in_the_process();
    let app = spawn_app_with(one_lane()).await;
    give(&app, NOURA, "240").await;
    let to_omar = order_body(OMAR, "point");
    let answers = in_one_batch(
        &app,
        &[
            (NOURA, "first", to_omar.clone()),
            (NOURA, "second", to_omar.clone()),
            (NOURA, "third", to_omar.clone()),
        ],
    )
    .await;
    // Sara's batch of one, then Noura's three together.
    let text = testkit::metrics::scrape(&app.client, &app.base).await;
    assert_eq!(batch_sizes(&text), (2.0, 4.0), "{text}");
    // The balance checks in the order sent: two covered, the third refused alone.
    assert_eq!(answers[0].0, 200, "{}", answers[0].1);
    assert_eq!(answers[1].0, 200, "{}", answers[1].1);
    assert_eq!(answers[0].1["status"], "successful");
    assert_ne!(
        answers[0].1["correlation_id"],
        answers[1].1["correlation_id"]
    );
    assert_eq!(
        answers[2],
        (
            422,
            error_b(
                "INSUFFICIENT_POINTS",
                &format!("insufficient points for client {NOURA}")
            )
        )
    );
    assert_eq!(app.balance_of(NOURA).await, "0");
    assert_eq!(app.balance_of(OMAR).await, "300");
    assert_eq!(
        app.count("SELECT count(*) AS n FROM point_orders WHERE payer_id = 1003")
            .await,
        2
    );
    // The refused order left no trace, not even its key: once Noura has the points, the same
    // request with the same key makes its order.
    assert_eq!(
        app.count("SELECT count(*) AS n FROM idempotency_keys WHERE key = 'third'")
            .await,
        0
    );
    give(&app, NOURA, "120").await;
    let (status, retried) = order_with_key(&app, NOURA, "third", &to_omar)
        .await
        .unwrap();
    assert_eq!(
        (status, &retried["status"]),
        (200, &json!("successful")),
        "{retried}"
    );
    let mut conn = app.database.connect().await;
    audit::run(&mut conn).await.unwrap();
}

#[tokio::test]
async fn a_key_sent_twice_into_one_batch_makes_one_order() {
    testkit::metrics::alone_in_the_process();
    let app = spawn_app_with(one_lane()).await;
    give(&app, NOURA, "1200").await;
    let to_omar = order_body(OMAR, "point");
    let answers = in_one_batch(
        &app,
        &[
            (NOURA, "k1", to_omar.clone()),
            (NOURA, "k1", to_omar.clone()),
            (NOURA, "k1", order_body(SARA, "point")),
            (NOURA, "k2", to_omar.clone()),
        ],
    )
    .await;
    assert_eq!(answers[0].0, 200, "{}", answers[0].1);
    assert_eq!(answers[1], answers[0], "the replay answers the first order");
    assert_eq!(
        answers[2].0, 409,
        "another body under the key: {}",
        answers[2].1
    );
    assert_eq!(answers[2].1["error"]["code"], "CONFLICT");
    assert_eq!(answers[3].0, 200, "{}", answers[3].1);
    assert_ne!(
        answers[3].1["correlation_id"],
        answers[0].1["correlation_id"]
    );
    assert_eq!(
        app.count("SELECT count(*) AS n FROM point_orders WHERE payer_id = 1003")
            .await,
        2
    );
    assert_eq!(app.balance_of(NOURA).await, "960", "charged once per key");
    let mut conn = app.database.connect().await;
    audit::run(&mut conn).await.unwrap();
}

#[tokio::test]
async fn a_batch_that_fails_is_written_again_one_order_at_a_time() {
    testkit::metrics::alone_in_the_process();
    let app = spawn_app_with(one_lane()).await;
    give(&app, NOURA, "1200").await;
    // The database refuses one order of the batch (a trigger of the test's own, standing in
    // for any row it would not take), which fails the statement that writes them all.
    app.sql(
        "CREATE FUNCTION refuse_order() RETURNS trigger LANGUAGE plpgsql AS $$ \
         BEGIN RAISE EXCEPTION 'refused by the test'; END $$; \
         CREATE TRIGGER refuse_order BEFORE INSERT ON point_orders FOR EACH ROW \
         WHEN (NEW.occasion = 'refused') EXECUTE FUNCTION refuse_order()",
    )
    .await;
    let mut refused = order_body(OMAR, "point");
    refused["occasion"] = json!("refused");
    let to_omar = order_body(OMAR, "point");
    let answers = in_one_batch(
        &app,
        &[
            (NOURA, "a", to_omar.clone()),
            (NOURA, "b", refused),
            (NOURA, "c", to_omar.clone()),
        ],
    )
    .await;
    assert_eq!(answers[0].0, 200, "{}", answers[0].1);
    assert_eq!(answers[1].0, 500, "{}", answers[1].1);
    assert_eq!(answers[2].0, 200, "{}", answers[2].1);
    assert_eq!(app.balance_of(NOURA).await, "960");
    assert_eq!(
        app.count("SELECT count(*) AS n FROM idempotency_keys WHERE key = 'b'")
            .await,
        0,
        "the failed order's key is free"
    );
    let mut conn = app.database.connect().await;
    audit::run(&mut conn).await.unwrap();
}

/// Two replicas, two batchers each: Sara's orders to Omar and Omar's to Sara go to different
/// batchers, whose batches lock the same two accounts at the same time. Taken in id order,
/// they wait for each other; taken as each order names them, they would deadlock (503).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn batches_paying_in_opposite_directions_never_deadlock() {
    let two_lanes = || Options {
        batches: BatchSettings {
            lanes: 2,
            ..BatchSettings::default()
        },
        ..Options::default()
    };
    let app = spawn_app_with(two_lanes()).await;
    let replica = spawn_replica(&app, two_lanes()).await;
    give(&app, SARA, "2400").await;
    give(&app, OMAR, "2400").await;
    let deadlocks =
        "SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()";
    let deadlocks_before = app.count(deadlocks).await;
    let orders = (0..40).map(|n| {
        let (payer, to) = if n % 2 == 0 {
            (SARA, OMAR)
        } else {
            (OMAR, SARA)
        };
        let base = if n % 4 < 2 {
            app.base.clone()
        } else {
            replica.clone()
        };
        let client = app.client.clone();
        async move {
            let sent = client
                .post(format!("{base}{}", paths::orders()))
                .bearer_auth(token(payer))
                .json(&order_body(to, "point"))
                .send()
                .await
                .unwrap();
            answer(sent).await
        }
    });
    let answers = join_all(orders).await;
    for (status, body) in &answers {
        assert_eq!(*status, 200, "{body}");
    }
    assert_eq!(app.count(deadlocks).await, deadlocks_before);
    // Each paid 20 × 120 and received 20 × 100.
    assert_eq!(app.balance_of(SARA).await, "2700.25");
    assert_eq!(app.balance_of(OMAR).await, "2000");
    let mut conn = app.database.connect().await;
    audit::run(&mut conn).await.unwrap();
}

#[tokio::test]
async fn an_order_whose_key_holder_was_refused_in_its_batch_is_decided_afresh() {
    testkit::metrics::alone_in_the_process();
    let app = spawn_app_with(one_lane()).await;
    give(&app, NOURA, "120").await;
    let to_omar = order_body(OMAR, "point");
    // The first takes Noura's points; the second is refused and lets its key go; the third,
    // under the same key, finds no order for it and is decided on its own: refused too.
    let answers = in_one_batch(
        &app,
        &[
            (NOURA, "k0", to_omar.clone()),
            (NOURA, "k1", to_omar.clone()),
            (NOURA, "k1", to_omar.clone()),
        ],
    )
    .await;
    assert_eq!(answers[0].0, 200, "{}", answers[0].1);
    let refused = (
        422,
        error_b(
            "INSUFFICIENT_POINTS",
            &format!("insufficient points for client {NOURA}"),
        ),
    );
    assert_eq!(answers[1], refused);
    assert_eq!(answers[2], refused);
    assert_eq!(
        app.count("SELECT count(*) AS n FROM idempotency_keys WHERE key = 'k1'")
            .await,
        0
    );
}

#[tokio::test]
async fn a_key_past_its_window_is_taken_over_and_a_live_one_is_not() {
    let app = spawn_app().await;
    // Two keys of Noura's bound to the legacy order: one a day and an hour old, one fresh.
    app.sql(&format!(
        "INSERT INTO idempotency_keys (client_id, key, request_hash, correlation_id, created_at) \
         VALUES ({NOURA}, 'old', '\\x00', '{LEGACY_ORDER}', now() - interval '25 hours'), \
                ({NOURA}, 'live', '\\x00', '{LEGACY_ORDER}', now())"
    ))
    .await;
    give(&app, NOURA, "240").await;
    let to_omar = order_body(OMAR, "point");
    let (status, made) = order_with_key(&app, NOURA, "old", &to_omar).await.unwrap();
    assert_eq!(
        (status, &made["status"]),
        (200, &json!("successful")),
        "{made}"
    );
    assert_ne!(made["correlation_id"], json!(LEGACY_ORDER));
    let (status, again) = order_with_key(&app, NOURA, "old", &to_omar).await.unwrap();
    assert_eq!(
        (status, &again),
        (200, &made),
        "the key now answers the new order"
    );
    let (status, body) = order_with_key(&app, NOURA, "live", &to_omar).await.unwrap();
    assert_eq!(
        (status, &body["error"]["code"]),
        (409, &json!("CONFLICT")),
        "{body}"
    );
    assert_eq!(app.balance_of(NOURA).await, "120");
}

#[tokio::test]
async fn four_copies_of_a_refused_request_under_one_key_are_each_refused() {
    testkit::metrics::alone_in_the_process();
    let app = spawn_app_with(one_lane()).await;
    let to_omar = order_body(OMAR, "point");
    // Noura has nothing: each copy, decided in turn, is refused; none waits for ever or
    // fails otherwise.
    let copies: Vec<_> = (0..4).map(|_| (NOURA, "storm", to_omar.clone())).collect();
    let answers = in_one_batch(&app, &copies).await;
    let refused = (
        422,
        error_b(
            "INSUFFICIENT_POINTS",
            &format!("insufficient points for client {NOURA}"),
        ),
    );
    for answer in &answers {
        assert_eq!(answer, &refused);
    }
}

/// A key whose first order is still being written (its batch waits on the payer's account)
/// is live: the same request sent meanwhile finds no order yet, queues for the next batch,
/// and there finds the key taken, then the first order. It is never made twice.
#[tokio::test]
async fn a_live_key_is_not_taken_over_by_the_next_batch() {
    testkit::metrics::alone_in_the_process();
    let app = spawn_app_with(one_lane()).await;
    give(&app, NOURA, "240").await;
    let to_omar = order_body(OMAR, "point");
    let held = Held::account(&app, NOURA).await;
    let first = order_with_key(&app, NOURA, "once", &to_omar);
    a_batch_waits_on_the_held_account(&app).await;
    let second = order_with_key(&app, NOURA, "once", &to_omar);
    testkit::metrics::wait_for(&app.client, &app.base, QUEUED, 1.0).await;
    held.release().await;
    let (first, second) = (first.await.unwrap(), second.await.unwrap());
    assert_eq!(first.0, 200, "{}", first.1);
    assert_eq!(second, first);
    assert_eq!(app.balance_of(NOURA).await, "120", "charged once");
    assert_eq!(
        app.count("SELECT count(*) AS n FROM point_orders WHERE payer_id = 1003")
            .await,
        1
    );
}
