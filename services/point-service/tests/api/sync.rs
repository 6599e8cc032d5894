//! The payment sync (docs/design.md, "Payment service"): an open order's payments read back
//! from the payment service and applied as their webhooks would be, once per payment,
//! whichever comes first; never failing an order on the payment service's silence; listed
//! for a person past the horizon.
//!
//! Tests that drive the worker themselves start the app with a sync that never comes due on
//! its own (an hour's delay and interval), and call `take_due`, `sync_one` and `pass` as
//! the worker does.

use std::time::{Duration, Instant};

use point_service::config::SyncSettings;
use point_service::payments::client::PaymentClient;
use point_service::payments::sync::{self, task::Worker};
use serde_json::{Value, json};

use crate::gateway::{Gateway, Lie};
use crate::helpers::*;

pub(crate) const HOUR: Duration = Duration::from_secs(3600);
/// The attempt window of a test app (its payment timeout, 2 s, plus 30 s).
pub(crate) const WINDOW: Duration = Duration::from_secs(32);

pub(crate) fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// An app whose sync comes due `after` its latest attempt and looks every `interval`,
/// against a gateway with a memory.
pub(crate) async fn app_with(after: Duration, interval: Duration) -> (TestApp, Gateway) {
    let gateway = Gateway::spawn();
    let app = spawn_app_with(Options {
        payment_url: Some(gateway.url.clone()),
        sync: SyncSettings {
            after,
            interval,
            reads_per_second: 100,
            horizon: Duration::from_secs(3 * 24 * 3600),
        },
        ..Options::default()
    })
    .await;
    (app, gateway)
}

/// An app whose own worker never syncs: the test drives it.
pub(crate) async fn quiet_app() -> (TestApp, Gateway) {
    app_with(HOUR, HOUR).await
}

/// The worker a test drives, over a pool of its own on the app's database.
pub(crate) fn worker(
    app: &TestApp,
    gateway: &Gateway,
    reads_per_second: u64,
    holder: &str,
) -> Worker {
    let database = testkit::config::database(app.database.url(), 2);
    Worker {
        pool: db::build_pool(&database.pool_settings()).unwrap(),
        payments: PaymentClient::new(
            Some(gateway.url.clone()),
            telemetry::client::http_client(Duration::from_secs(2), telemetry::client::DEFAULT_IDLE)
                .unwrap(),
        ),
        settings: SyncSettings {
            // An order read back comes due again only when a test says so.
            after: HOUR,
            interval: Duration::from_secs(60),
            reads_per_second,
            horizon: Duration::from_secs(3 * 24 * 3600),
        },
        window: WINDOW,
        holder: holder.to_owned(),
    }
}

/// A checkout order of Sara's for 100 points to Omar (15.00 SAR).
pub(crate) async fn checkout(app: &TestApp) -> String {
    let (status, order) = app.order(SARA, &order_body(OMAR, "checkout")).await;
    assert_eq!(status, 200, "{order}");
    order["correlation_id"].as_str().unwrap().to_owned()
}

pub(crate) async fn pay(app: &TestApp, order: &str, card: &str) -> (u16, Value) {
    app.pay_card(order, SARA, &json!({"id": card, "cvv": "123"}))
        .await
}

/// A checkout order paid with `card`, the pay call answered as `expected`.
pub(crate) async fn paid_with(app: &TestApp, card: &str, expected: u16) -> String {
    let order = checkout(app).await;
    let (status, body) = pay(app, &order, card).await;
    assert_eq!(status, expected, "{body}");
    order
}

pub(crate) async fn status_of(app: &TestApp, order: &str) -> String {
    app.get_order(order, SARA).await.1["status"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Waits until `query` (`SELECT count(*) AS n …`) counts at least one row: two minutes,
/// far past the seconds it takes, for a CI machine running every test at once.
pub(crate) async fn wait_for(app: &TestApp, query: &str) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while app.count(query).await == 0 {
        assert!(Instant::now() < deadline, "never came: {query}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Makes the order due now (its delay, or a lease, has passed).
pub(crate) async fn due_now(app: &TestApp, order: &str) {
    app.sql(&format!(
        "UPDATE payment_syncs SET due_at = now() WHERE correlation_id = '{order}'"
    ))
    .await;
}

/// Takes the due order and syncs it, as one step of the worker's pass.
pub(crate) async fn sync_due(app: &TestApp, worker: &Worker, order: &str) {
    due_now(app, order).await;
    sync_taken(worker, order).await;
}

/// Takes `order`, which is due, and syncs it.
pub(crate) async fn sync_taken(worker: &Worker, order: &str) {
    let taken = take(worker, order).await;
    sync_one(worker, &taken).await;
}

/// Takes `order`, which is due, as the worker does before reading it back.
pub(crate) async fn take(worker: &Worker, order: &str) -> sync::queue::Taken {
    let mut conn = worker.pool.get().await.unwrap();
    let taken = sync::queue::take_due(&mut conn, Duration::from_secs(300), worker.settings.horizon)
        .await
        .unwrap()
        .expect("the order is due");
    assert_eq!(taken.correlation_id.to_string(), order);
    taken
}

pub(crate) async fn sync_one(worker: &Worker, taken: &sync::queue::Taken) {
    sync::sync_one(
        &worker.pool,
        &worker.payments,
        &worker.settings,
        worker.window,
        taken,
        &mut worker.pace(),
    )
    .await
    .unwrap();
}

pub(crate) async fn credits_of(app: &TestApp, order: &str) -> i64 {
    app.count(&format!(
        "SELECT count(*) AS n FROM point_entries WHERE order_correlation_id = '{order}' AND kind = 'gift_received'"
    ))
    .await
}

pub(crate) async fn sync_row(app: &TestApp, order: &str) -> i64 {
    app.count(&format!(
        "SELECT count(*) AS n FROM payment_syncs WHERE correlation_id = '{order}'"
    ))
    .await
}

pub(crate) fn capture(id: &str, order: &str, payment: &str) -> Value {
    json!({"id": id, "type": "payment_captured", "data": {"reference": order, "payment_id": payment,
        "provider": "gateway", "amount_minor": 1500, "currency": "SAR"}})
}

/// The rule's timing: a capture whose webhook never comes is applied once the attempt is
/// `PAYMENT_SYNC_AFTER_SECONDS` old, within one interval after that.
#[tokio::test]
async fn a_captured_payment_with_no_webhook_settles_after_the_delay_within_an_interval() {
    let (after, interval) = (Duration::from_secs(2), Duration::from_secs(1));
    let (app, gateway) = app_with(after, interval).await;
    let order = paid_with(&app, "silent-1", 200).await;
    wait_for(
        &app,
        &format!("SELECT count(*) AS n FROM point_orders WHERE correlation_id = '{order}' AND status = 'successful'"),
    )
    .await;
    assert_eq!(credits_of(&app, &order).await, 1);
    assert_eq!(app.balance_of(OMAR).await, "100");
    let payment = gateway.payment_of(&order);
    // When the sync applied it, counted from the attempt, in milliseconds.
    let waited = app
        .count(&format!(
            "SELECT (EXTRACT(EPOCH FROM e.received_at - a.started_at) * 1000)::bigint AS n \
             FROM payment_events e, payment_attempts a \
             WHERE e.id = 'sync:payment_captured:{payment}' AND a.correlation_id = '{order}'"
        ))
        .await;
    assert!(
        waited >= after.as_millis() as i64,
        "synced after {waited} ms, before the delay"
    );
    // One interval, and a margin for a loaded machine's scheduling.
    let bound = (after + interval + Duration::from_secs(5)).as_millis() as i64;
    assert!(waited <= bound, "synced after {waited} ms");
    assert_eq!(
        sync_row(&app, &order).await,
        0,
        "a final order has nothing left to sync"
    );
}

#[tokio::test]
async fn a_late_webhook_after_the_sync_credits_nothing_and_lists_nothing() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "silent-1", 200).await;
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "successful");
    let payment = gateway.payment_of(&order);
    let (status, body) = app
        .webhook(
            &capture("evt_late", &order, &payment),
            WEBHOOK_SECRET,
            now(),
        )
        .await;
    assert_eq!(
        (status, &body["outcome"]),
        (200, &json!("duplicate_capture"))
    );
    assert_eq!(credits_of(&app, &order).await, 1);
    assert_eq!(app.balance_of(OMAR).await, "100");
    assert_eq!(
        app.count("SELECT count(*) AS n FROM unapplied_captures")
            .await,
        0
    );
}

#[tokio::test]
async fn a_webhook_first_leaves_the_sync_nothing_to_do() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "silent-1", 200).await;
    let payment = gateway.payment_of(&order);
    let (_, body) = app
        .webhook(&capture("evt_1", &order, &payment), WEBHOOK_SECRET, now())
        .await;
    assert_eq!(body["outcome"], "captured");
    assert_eq!(sync_row(&app, &order).await, 0);
    // Even taken by a worker that had read it before the webhook came: no second credit.
    app.sql(&format!(
        "INSERT INTO payment_syncs (correlation_id, due_at) VALUES ('{order}', now())"
    ))
    .await;
    sync_due(&app, &worker, &order).await;
    assert_eq!(credits_of(&app, &order).await, 1);
    assert_eq!(gateway.reads().len(), 0, "a final order is not read back");
}

#[tokio::test]
async fn a_pay_call_whose_answer_was_lost_is_found_by_reference() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "lost-1", 500).await;
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM payment_attempts WHERE correlation_id = \
                            '{order}' AND state = 'lost'"
        ))
        .await,
        1
    );
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "successful");
    assert_eq!(app.balance_of(OMAR).await, "100");
    let reads: Vec<String> = gateway.reads().into_iter().map(|(_, r)| r).collect();
    assert_eq!(reads, [format!("/v1/payments?reference={order}")]);
}

#[tokio::test]
async fn a_pending_payment_is_left_alone_and_read_again_later() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "card_visa_4242", 200).await;
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "initial_order");
    assert_eq!(
        app.count("SELECT count(*) AS n FROM payment_events").await,
        0
    );
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM payment_syncs WHERE correlation_id = '{order}' AND tries = 1 \
             AND due_at > now() AND last_error LIKE '%pending%' AND listed_at IS NULL"
        ))
        .await,
        1
    );
    // The client finishes the 3-D Secure step; the webhook is lost.
    gateway.set_status(&gateway.payment_of(&order), "captured");
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "successful");
}

#[tokio::test]
async fn a_declined_payment_read_back_fails_the_order() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "card_visa_4242", 200).await;
    gateway.set_status(&gateway.payment_of(&order), "declined");
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "payment_failed");
    assert_eq!(sync_row(&app, &order).await, 0);
}

#[tokio::test]
async fn the_payment_service_down_delays_the_sync_and_never_fails_the_order() {
    let (app, gateway) = quiet_app().await;
    let mut worker = worker(&app, &gateway, 100, "w");
    worker.settings.after = Duration::from_secs(1);
    let order = paid_with(&app, "silent-1", 200).await;
    gateway.set_down(true);
    let micros = |at: &str| {
        format!(
            "SELECT (EXTRACT(EPOCH FROM {at}) * 1000000)::bigint AS n FROM payment_syncs \
             WHERE correlation_id = '{order}'"
        )
    };
    for (tries, wait) in [(1, 1_000_000), (2, 2_000_000), (3, 4_000_000)] {
        let before = app.count(&micros("clock_timestamp()")).await;
        sync_due(&app, &worker, &order).await;
        let after = app.count(&micros("clock_timestamp()")).await;
        assert_eq!(status_of(&app, &order).await, "initial_order");
        // The next read is the delay doubled with each failure: written between the two
        // clock readings, so due then plus the wait.
        let due = app.count(&micros("due_at")).await;
        assert!(
            (before + wait..=after + wait).contains(&due),
            "try {tries}: due {} ms after the sync began, {} ms after it ended",
            (due - before) / 1000,
            (due - after) / 1000
        );
    }
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM payment_syncs WHERE correlation_id = '{order}' AND tries = 3 \
             AND last_error LIKE '%answered 503%'"
        ))
        .await,
        1
    );
    gateway.set_down(false);
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "successful");
}

#[tokio::test]
async fn an_event_of_an_unknown_type_is_recorded_and_its_order_synced_at_once() {
    // An hour's delay: only the unknown event can bring the sync early.
    let (app, gateway) = app_with(HOUR, Duration::from_millis(300)).await;
    let order = paid_with(&app, "silent-1", 200).await;
    let payment = gateway.payment_of(&order);
    let mut event = capture("evt_dotted", &order, &payment);
    event["type"] = json!("payment.captured");
    let (status, body) = app.webhook(&event, WEBHOOK_SECRET, now()).await;
    assert_eq!((status, &body["outcome"]), (200, &json!("unknown_type")));
    assert_eq!(
        app.count(
            "SELECT count(*) AS n FROM payment_events WHERE id = 'evt_dotted' \
                   AND outcome = 'unknown_type' AND body LIKE '%payment.captured%'"
        )
        .await,
        1,
        "recorded with its body"
    );
    wait_for(
        &app,
        &format!("SELECT count(*) AS n FROM point_orders WHERE correlation_id = '{order}' AND status = 'successful'"),
    )
    .await;
    assert_eq!(app.balance_of(OMAR).await, "100");
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM payment_events WHERE id = 'sync:payment_captured:{payment}'"
        ))
        .await,
        1
    );
}

#[tokio::test]
async fn an_order_undecided_past_the_horizon_is_listed_for_a_person() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "card_visa_4242", 200).await;
    app.sql(&format!(
        "UPDATE payment_syncs SET since = now() - interval '3 days 1 minute' WHERE correlation_id = '{order}'"
    ))
    .await;
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "initial_order");
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM payment_syncs WHERE correlation_id = '{order}' AND listed_at IS NOT NULL"
        ))
        .await,
        1
    );
    due_now(&app, &order).await;
    let mut conn = worker.pool.get().await.unwrap();
    let taken = sync::queue::take_due(&mut conn, HOUR, worker.settings.horizon)
        .await
        .unwrap();
    assert!(taken.is_none(), "a listed order is not read back again");
    drop(conn);

    let output = point_service_command(app.database.url(), &["unsynced-orders"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        "order\tpayer\tamount\tlatest_attempt\tlisted_at\treason"
    );
    let fields: Vec<&str> = lines[1].split('\t').collect();
    assert_eq!(&fields[..3], [order.as_str(), "1001", "15.00 SAR"]);
    assert_eq!(
        fields[5],
        "a payment is still pending at the payment service"
    );
    assert_eq!(lines[2], "1 open");

    let resolved = point_service_command(
        app.database.url(),
        &[
            "unsynced-orders",
            "--resolve",
            &order,
            "--note",
            "abandoned at 3-D Secure",
        ],
    )
    .output()
    .unwrap();
    assert!(resolved.status.success());
    let output = point_service_command(app.database.url(), &["unsynced-orders"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8(output.stdout)
            .unwrap()
            .ends_with("0 open\n")
    );
}

#[tokio::test]
async fn a_read_back_naming_another_order_or_payment_is_not_applied() {
    // Read by id (an answered call) and by reference (a lost one, whose payment another
    // order's must not stand for).
    for (lie, card, answered) in [
        (Lie::OtherReference, "silent-1", 200),
        (Lie::OtherReference, "lost-1", 500),
        (Lie::OtherPayment, "silent-1", 200),
    ] {
        let (app, gateway) = quiet_app().await;
        let worker = worker(&app, &gateway, 100, "w");
        let order = paid_with(&app, card, answered).await;
        gateway.set_lie(lie);
        sync_due(&app, &worker, &order).await;
        assert_eq!(
            status_of(&app, &order).await,
            "initial_order",
            "{lie:?} {card}"
        );
        assert_eq!(
            app.count("SELECT count(*) AS n FROM payment_events").await,
            0,
            "{lie:?} {card}"
        );
        assert_eq!(
            app.count(&format!(
                "SELECT count(*) AS n FROM payment_syncs WHERE correlation_id = '{order}' \
                 AND last_error LIKE '%another%' AND due_at > now()"
            ))
            .await,
            1,
            "{lie:?} {card}: read again later"
        );
        // The payment service tells the truth again.
        gateway.set_lie(Lie::None);
        sync_due(&app, &worker, &order).await;
        assert_eq!(
            status_of(&app, &order).await,
            "successful",
            "{lie:?} {card}"
        );
    }
}

#[tokio::test]
async fn a_capture_of_another_amount_or_currency_read_back_is_listed_for_refund() {
    for (card, reason) in [
        ("usd-1", "currency_mismatch"),
        ("short-1", "amount_mismatch"),
    ] {
        let (app, gateway) = quiet_app().await;
        let worker = worker(&app, &gateway, 100, "w");
        let order = paid_with(&app, card, 200).await;
        sync_due(&app, &worker, &order).await;
        assert_eq!(status_of(&app, &order).await, "initial_order", "{card}");
        assert_eq!(credits_of(&app, &order).await, 0, "{card}");
        let payment = gateway.payment_of(&order);
        assert_eq!(
            app.count(&format!(
                "SELECT count(*) AS n FROM unapplied_captures WHERE payment_id = '{payment}' AND reason = '{reason}'"
            ))
            .await,
            1,
            "{card}"
        );
        assert_eq!(
            sync_row(&app, &order).await,
            0,
            "{card}: nothing left to wait for"
        );
    }
}

#[tokio::test]
async fn a_status_that_flips_back_never_credits_twice_or_takes_money_silently() {
    // Declined, then read back as captured while the order is still open (the decline was
    // superseded by a lost call): the reads disagree across passes, nothing is applied, and
    // the order ends listed for a person with both readings.
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "card_visa_4242", 200).await;
    let payment = gateway.payment_of(&order);
    assert_eq!(pay(&app, &order, "void-2").await.0, 500);
    gateway.set_status(&payment, "declined");
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "initial_order", "superseded");
    gateway.set_status(&payment, "captured");
    for _ in 0..sync::DISAGREEMENTS_LISTED {
        let asked = gateway.reads().len();
        sync_due(&app, &worker, &order).await;
        assert!(
            gateway.reads().len() > asked,
            "the payment service was asked"
        );
        assert_eq!(status_of(&app, &order).await, "initial_order");
    }
    assert_eq!(credits_of(&app, &order).await, 0);
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM payment_syncs WHERE correlation_id = '{order}' \
             AND listed_at IS NOT NULL AND last_error = 'payment {payment} read back differently: \
             declined 15.00 SAR (on an earlier pass), then captured 15.00 SAR (by id)'"
        ))
        .await,
        1,
        "listed with both readings"
    );

    // Declined, then captured: the order failed; the capture, when it is told, is listed
    // for refund (and the settlement check reports it if it never is).
    let order = paid_with(&app, "card_visa_4242", 200).await;
    let payment = gateway.payment_of(&order);
    gateway.set_status(&payment, "declined");
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "payment_failed");
    gateway.set_status(&payment, "captured");
    let (_, body) = app
        .webhook(
            &capture("evt_flip", &order, &payment),
            WEBHOOK_SECRET,
            now(),
        )
        .await;
    assert_eq!(body["outcome"], "payment_failed");
    assert_eq!(credits_of(&app, &order).await, 0);
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM unapplied_captures WHERE payment_id = '{payment}'"
        ))
        .await,
        1
    );
}

/// The same capture told by the webhook on one replica and read back on another, at once,
/// many times over: each order credited exactly once, nothing listed for refund.
#[tokio::test]
async fn a_capture_read_back_while_its_webhook_is_applied_credits_once() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 1000, "w");
    let mut orders = Vec::new();
    for i in 0..12 {
        let order = paid_with(&app, &format!("silent-{i}"), 200).await;
        orders.push(order);
    }
    for (i, order) in orders.iter().enumerate() {
        let payment = gateway.payment_of(order);
        let event = capture(&format!("evt_race_{i}"), order, &payment);
        due_now(&app, order).await;
        let taken = take(&worker, order).await;
        let webhook = app.webhook(&event, WEBHOOK_SECRET, now());
        let sync = sync_one(&worker, &taken);
        let ((status, body), ()) = tokio::join!(webhook, sync);
        assert_eq!(status, 200, "{body}");
    }
    for order in &orders {
        assert_eq!(credits_of(&app, order).await, 1, "{order}");
    }
    assert_eq!(app.balance_of(OMAR).await, "1200");
    assert_eq!(
        app.count("SELECT count(*) AS n FROM unapplied_captures")
            .await,
        0
    );
}

/// A worker that dies after taking an order (between reading and applying) leaves it due
/// again once its lease has passed, and nothing is lost or applied twice.
#[tokio::test]
async fn a_crash_between_reading_and_applying_leaves_the_order_due_again() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "silent-1", 200).await;
    due_now(&app, &order).await;
    let mut conn = worker.pool.get().await.unwrap();
    let taken = sync::queue::take_due(&mut conn, HOUR, worker.settings.horizon)
        .await
        .unwrap()
        .unwrap();
    // It reads the payment back, then dies before applying it.
    let plan = sync::read::plan(&mut conn, taken.correlation_id, WINDOW)
        .await
        .unwrap();
    drop(conn);
    let reading = sync::read::read(
        &worker.payments,
        taken.correlation_id,
        &plan,
        &mut worker.pace(),
        WINDOW,
    )
    .await;
    assert_eq!(reading.payments.len(), 1);
    drop(reading);

    let mut conn = worker.pool.get().await.unwrap();
    assert!(
        sync::queue::take_due(&mut conn, HOUR, worker.settings.horizon)
            .await
            .unwrap()
            .is_none(),
        "taken under a lease: no other worker takes it meanwhile"
    );
    drop(conn);
    assert_eq!(status_of(&app, &order).await, "initial_order");
    // The lease passes.
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "successful");
    assert_eq!(credits_of(&app, &order).await, 1);
}

/// Two replicas' workers: one holds the lease and syncs, the other waits (its reads would
/// come through the payment service's other door); every order is credited once.
#[tokio::test]
async fn two_replicas_syncing_credit_once() {
    let (app, gateway) = app_with(Duration::from_secs(1), Duration::from_millis(300)).await;
    let replica = spawn_replica(
        &app,
        Options {
            payment_url: Some(gateway.another_door()),
            sync: SyncSettings {
                after: Duration::from_secs(1),
                interval: Duration::from_millis(300),
                reads_per_second: 100,
                horizon: Duration::from_secs(3 * 24 * 3600),
            },
            ..Options::default()
        },
    )
    .await;
    assert!(replica.starts_with("http://"));
    let mut orders = Vec::new();
    for i in 0..10 {
        orders.push(paid_with(&app, &format!("silent-{i}"), 200).await);
    }
    wait_for(
        &app,
        "SELECT (count(*) = 10)::int::bigint AS n FROM point_orders WHERE status = 'successful' \
         AND payment_type = 'checkout' AND order_no IS NOT NULL",
    )
    .await;
    for order in &orders {
        assert_eq!(credits_of(&app, order).await, 1, "{order}");
    }
    assert_eq!(app.balance_of(OMAR).await, "1000");
    let doors = (gateway.reads_through(0), gateway.reads_through(1));
    assert!(
        doors.0.min(doors.1) == 0 && doors.0 + doors.1 >= 10,
        "one replica read every order back, the other none: {doors:?}"
    );
}

/// Two workers' passes at once over several due orders: only the lease holder syncs, all of
/// them, and the lease names it.
#[tokio::test]
async fn of_two_workers_only_the_lease_holder_syncs() {
    let (app, gateway) = quiet_app().await;
    for i in 0..6 {
        paid_with(&app, &format!("card-{i}"), 200).await;
    }
    app.sql("UPDATE payment_syncs SET due_at = now()").await;
    let first = worker(&app, &gateway, 100, "first");
    let second = worker(&app, &gateway, 100, "second");
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let (mut first_pace, mut second_pace) = (first.pace(), second.pace());
    let (a, b) = tokio::join!(
        sync::task::pass(&first, &mut first_pace, &stop),
        sync::task::pass(&second, &mut second_pace, &stop)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(
        (a + b, a.min(b)),
        (6, 0),
        "one synced every order, the other held no lease"
    );
    let holder = if a == 6 { "first" } else { "second" };
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM worker_leases WHERE name = 'payment-sync' AND holder = '{holder}'"
        ))
        .await,
        1
    );
}

/// The reads are paced: a backlog after an outage reaches the payment service at
/// `PAYMENT_SYNC_READS_PER_SECOND` at most.
#[tokio::test]
async fn reads_of_a_backlog_are_paced() {
    let (app, gateway) = quiet_app().await;
    let rate = 5;
    let worker = worker(&app, &gateway, rate, "w");
    for i in 0..8 {
        paid_with(&app, &format!("card-{i}"), 200).await;
    }
    app.sql("UPDATE payment_syncs SET due_at = now()").await;
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let started = Instant::now();
    let synced = sync::task::pass(&worker, &mut worker.pace(), &stop)
        .await
        .unwrap();
    assert_eq!(synced, 8);
    let reads = gateway.reads();
    assert_eq!(reads.len(), 8);
    // The first read goes at once, each next one a fifth of a second after the one before.
    let last = reads.last().unwrap().0.duration_since(started);
    assert!(
        last >= Duration::from_millis(7 * 1000 / rate),
        "8 reads in {last:?}"
    );
}

/// While a read waits on the payment service, the sync holds no database connection.
#[tokio::test]
async fn no_connection_is_held_while_the_payment_service_is_asked() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "silent-1", 200).await;
    due_now(&app, &order).await;
    let (release, held) = gateway.hold_reads();
    let sync = tokio::spawn({
        let worker = worker.clone();
        let order = order.clone();
        async move { sync_taken(&worker, &order).await }
    });
    held.acquire().await.unwrap().forget();
    let status = worker.pool.status();
    assert!(status.size >= 1, "the sync used the pool before asking");
    assert_eq!(
        status.available, status.size,
        "every connection is back in the pool: {status:?}"
    );
    release.add_permits(1);
    sync.await.unwrap();
    assert_eq!(status_of(&app, &order).await, "successful");
}

/// A backlog after an outage drains at the configured rate, with no connection held across
/// a read. `SYNC_BACKLOG_ORDERS` (default 300) and `SYNC_BACKLOG_RATE` (reads per second,
/// default 150) size it; docs/decisions.md gives a 10 000-order run's figures.
#[tokio::test]
async fn a_backlog_drains_at_the_configured_rate() {
    let number = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (orders, rate) = (
        number("SYNC_BACKLOG_ORDERS", 300),
        number("SYNC_BACKLOG_RATE", 150),
    );
    let (app, gateway) = quiet_app().await;
    app.sql(&format!(
        "INSERT INTO point_orders (correlation_id, payer_id, recipient_id, point_offer_id, status, \
             point_amount, purchased_point_amount, money_amount, payment_type, order_type) \
         SELECT gen_random_uuid(), {SARA}, {OMAR}, '{OFFER}', 'initial_order', 100, 120, 15.00, \
                'checkout', 'gift' FROM generate_series(1, {orders}); \
         INSERT INTO payment_attempts (correlation_id, kind, state, payment_id, answered_at) \
         SELECT correlation_id, 'card', 'answered', 'backlog-' || correlation_id, now() \
         FROM point_orders WHERE status = 'initial_order'; \
         INSERT INTO payment_syncs (correlation_id, due_at) \
         SELECT correlation_id, now() FROM point_orders WHERE status = 'initial_order';"
    ))
    .await;
    let mut worker = worker(&app, &gateway, rate, "w");
    worker.settings.interval = Duration::from_secs(3600);
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let started = Instant::now();
    let synced = sync::task::pass(&worker, &mut worker.pace(), &stop)
        .await
        .unwrap();
    let took = started.elapsed();
    assert_eq!(synced as u64, orders);
    assert_eq!(
        app.count("SELECT count(*) AS n FROM point_orders WHERE status = 'initial_order'")
            .await,
        0
    );
    assert_eq!(
        app.count("SELECT count(*) AS n FROM payment_syncs").await,
        0
    );
    // Paced: no faster than the rate allows (the first read goes at once).
    let floor = Duration::from_secs_f64((orders - 1) as f64 / rate as f64);
    assert!(took >= floor, "{orders} orders in {took:?}");
    println!(
        "backlog: {orders} orders at {rate} reads/s drained in {:.1} s ({:.0} orders/s)",
        took.as_secs_f64(),
        orders as f64 / took.as_secs_f64()
    );
}

/// A sync that read the order before a newer pay attempt cannot delete, list or postpone
/// the newer attempt's schedule (found by review: a refused or declined first payment, a
/// second payment whose webhook is lost).
#[tokio::test]
async fn a_sync_that_read_before_a_newer_attempt_leaves_its_schedule() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "card_visa_4242", 200).await;
    gateway.set_status(&gateway.payment_of(&order), "declined");
    due_now(&app, &order).await;
    let taken = take(&worker, &order).await;
    let (release, held) = gateway.hold_reads();
    let sync = tokio::spawn({
        let worker = worker.clone();
        async move { sync_one(&worker, &taken).await }
    });
    held.acquire().await.unwrap().forget();
    // While the sync waits on the payment service, the client pays again; that payment is
    // captured and its webhook lost.
    let (status, body) = pay(&app, &order, "silent-2").await;
    assert_eq!(status, 200, "{body}");
    release.add_permits(1000); // every read from here on goes through
    sync.await.unwrap();
    assert_eq!(
        status_of(&app, &order).await,
        "initial_order",
        "the older payment's decline is superseded by the newer attempt"
    );
    assert_eq!(
        sync_row(&app, &order).await,
        1,
        "the newer attempt is still to be synced"
    );
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "successful");
    assert_eq!(credits_of(&app, &order).await, 1);
}

/// A capture naming one order whose payment another order's pay call was answered with
/// (a payment service that mixed up the reference) credits neither: it is listed for
/// refund, and the order that paid is not told it was paid by the sync either.
#[tokio::test]
async fn a_capture_naming_the_wrong_order_credits_neither_and_is_listed() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let payer = paid_with(&app, "silent-1", 200).await;
    let other = checkout(&app).await;
    let payment = gateway.payment_of(&payer);
    let (status, body) = app
        .webhook(
            &capture("evt_mixed", &other, &payment),
            WEBHOOK_SECRET,
            now(),
        )
        .await;
    assert_eq!((status, &body["outcome"]), (200, &json!("other_order")));
    assert_eq!(status_of(&app, &other).await, "initial_order");
    sync_due(&app, &worker, &payer).await;
    assert_eq!(
        credits_of(&app, &payer).await + credits_of(&app, &other).await,
        0
    );
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM unapplied_captures WHERE payment_id = '{payment}' AND reason = 'other_order'"
        ))
        .await,
        1,
        "the payer's money is listed for refund"
    );
}

/// A webhook event whose id looks like the sync's is recorded under an id of its own, so it
/// cannot stand in for (and block) the sync's record of the payment.
#[tokio::test]
async fn a_webhook_event_with_a_sync_like_id_does_not_block_the_sync() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "silent-1", 200).await;
    let payment = gateway.payment_of(&order);
    let mut event = capture(
        &format!("sync:payment_captured:{payment}"),
        &order,
        &payment,
    );
    event["type"] = json!("payment.captured");
    let (status, body) = app.webhook(&event, WEBHOOK_SECRET, now()).await;
    assert_eq!((status, &body["outcome"]), (200, &json!("unknown_type")));
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "successful");
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM payment_events WHERE id IN \
             ('webhook:sync:payment_captured:{payment}', 'sync:payment_captured:{payment}')"
        ))
        .await,
        2
    );
    // The same delivery again is the same event.
    let (_, body) = app.webhook(&event, WEBHOOK_SECRET, now()).await;
    assert_eq!(body["outcome"], "duplicate_event");
}

/// An order whose sync keeps failing on our side is not retried for ever in silence: it
/// backs off like an undecided one and is listed past the horizon.
#[tokio::test]
async fn an_order_whose_sync_keeps_failing_is_listed_past_the_horizon() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "silent-1", 200).await;
    // Every record of a read-back payment fails (as a payment id too long for the index did).
    app.sql(
        "CREATE FUNCTION refuse_sync() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$; \
         CREATE TRIGGER refuse_sync BEFORE INSERT ON payment_events FOR EACH ROW \
         WHEN (NEW.id LIKE 'sync:%') EXECUTE FUNCTION refuse_sync();",
    )
    .await;
    due_now(&app, &order).await;
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    sync::task::pass(&worker, &mut worker.pace(), &stop)
        .await
        .unwrap();
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM payment_syncs WHERE correlation_id = '{order}' \
             AND listed_at IS NULL AND last_error LIKE 'the sync failed:%refused by the test%'"
        ))
        .await,
        1,
        "backed off with why"
    );
    app.sql(&format!(
        "UPDATE payment_syncs SET since = now() - interval '3 days 1 minute', due_at = now() \
         WHERE correlation_id = '{order}'"
    ))
    .await;
    sync::task::pass(&worker, &mut worker.pace(), &stop)
        .await
        .unwrap();
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM payment_syncs WHERE correlation_id = '{order}' AND listed_at IS NOT NULL"
        ))
        .await,
        1
    );
}

/// The settlement gauges follow days, not runs: a re-run of an older day neither hides nor
/// stands for the latest, and a day that could not be read stays counted until a run of it
/// concludes.
#[tokio::test]
async fn the_settlement_gauges_follow_the_days() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    app.sql(
        "INSERT INTO settlement_checks (day, checked_at, outcome, differences) VALUES \
           (current_date - 1, now() - interval '20 hours', 'differs', 2), \
           (current_date - 5, now(), 'agrees', 0), \
           (current_date - 2, now() - interval '40 hours', 'unreadable', 0), \
           (current_date - 40, now() - interval '40 days', 'unreadable', 0)",
    )
    .await;
    let mut conn = worker.pool.get().await.unwrap();
    let figures = sync::gauges::figures(&mut conn).await.unwrap();
    assert_eq!(
        figures.settlement_differences, 2,
        "the latest day's, not the latest run's"
    );
    let age = chrono::Utc::now().timestamp() as f64 - figures.settlement_checked_at;
    assert!(
        (19.9 * 3600.0..21.0 * 3600.0).contains(&age),
        "checked {age} s ago"
    );
    assert_eq!(figures.settlement_unreadable, 1, "one day of the last 30");
}
