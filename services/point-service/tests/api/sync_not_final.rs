//! The payment sync on what is not final (docs/design.md, "Payment service"): a pay call
//! whose answer was lost keeps its order under sync until its payment turns up and is
//! decided, or the horizon passes, however late the payment service commits it; two reads
//! of one payment that disagree decide nothing, and an order whose reads keep disagreeing is
//! listed with both readings. The fake payment service here commits a `late…` card's
//! payment only after the first read of its reference has answered without it.

use std::time::Duration;

use point_service::payments::sync::{DISAGREEMENTS_LISTED, queue};
use serde_json::json;

use crate::gateway::Lie;
use crate::helpers::*;
use crate::sync::*;

/// How an order's sync stands: (tries, listed, last_error).
async fn sync_state(app: &TestApp, order: &str) -> (i64, bool, String) {
    let tries = app
        .count(&format!(
            "SELECT tries::bigint AS n FROM payment_syncs WHERE correlation_id = '{order}'"
        ))
        .await;
    let listed = app
        .count(&format!(
            "SELECT count(*) AS n FROM payment_syncs WHERE correlation_id = '{order}' \
             AND listed_at IS NOT NULL"
        ))
        .await;
    (tries, listed == 1, last_error(app, order).await)
}

async fn last_error(app: &TestApp, order: &str) -> String {
    let mut conn = diesel_async::AsyncPgConnection::establish(app.database.url())
        .await
        .unwrap();
    use diesel::prelude::*;
    use diesel_async::{AsyncConnection, RunQueryDsl};
    use point_service::db::schema::payment_syncs;
    payment_syncs::table
        .find(order.parse::<uuid::Uuid>().unwrap())
        .select(payment_syncs::last_error)
        .first::<Option<String>>(&mut conn)
        .await
        .unwrap()
        .unwrap_or_default()
}

/// What `point-service unsynced-orders` prints of `order`: its reason, if listed.
fn listed_reason(app: &TestApp, order: &str) -> Option<String> {
    let output = point_service_command(app.database.url(), &["unsynced-orders"])
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .find(|line| line.starts_with(order))
        .map(|line| line.split('\t').nth(5).unwrap().to_owned())
}

/// Past the horizon, counted from the latest attempt.
async fn past_the_horizon(app: &TestApp, order: &str) {
    app.sql(&format!(
        "UPDATE payment_syncs SET since = now() - interval '3 days 1 minute' \
         WHERE correlation_id = '{order}'"
    ))
    .await;
}

const NOTHING_TURNED_UP: &str = "1 pay call(s) whose answer was lost, and no payment of it has \
                                 turned up at the payment service yet";

/// The rule with its timing, on the app's own worker: the first read (after the delay)
/// finds nothing, the payment service commits the payment just after it, and the next read
/// (one backoff later) finds it captured and credits it once.
#[tokio::test]
async fn a_lost_call_whose_payment_turns_up_after_the_first_read_is_credited_once() {
    let (after, interval) = (Duration::from_secs(1), Duration::from_millis(200));
    let (app, gateway) = app_with(after, interval).await;
    let order = paid_with(&app, "late-captured-1", 500).await;
    assert_eq!(
        gateway.uncommitted(&order),
        1,
        "not committed before a read"
    );
    wait_for(
        &app,
        &format!(
            "SELECT count(*) AS n FROM point_orders WHERE correlation_id = '{order}' \
             AND status = 'successful'"
        ),
    )
    .await;
    assert_eq!(credits_of(&app, &order).await, 1);
    assert_eq!(app.balance_of(OMAR).await, "100");
    let reads: Vec<String> = gateway.reads().into_iter().map(|(_, r)| r).collect();
    let by_reference = format!("/v1/payments?reference={order}");
    assert_eq!(
        reads,
        [by_reference.clone(), by_reference],
        "found on the second read"
    );
    // Applied one delay after the attempt, then one backoff (the delay again) after that:
    // the first read's empty answer kept the order due.
    let payment = gateway.payment_of(&order);
    let waited = app
        .count(&format!(
            "SELECT (EXTRACT(EPOCH FROM e.received_at - a.started_at) * 1000)::bigint AS n \
             FROM payment_events e, payment_attempts a \
             WHERE e.id = 'sync:payment_captured:{payment}' AND a.correlation_id = '{order}'"
        ))
        .await;
    let (floor, bound) = (2 * after, 2 * after + 2 * interval + Duration::from_secs(5));
    assert!(
        (floor.as_millis() as i64..=bound.as_millis() as i64).contains(&waited),
        "credited {waited} ms after the attempt"
    );
    wait_for(
        &app,
        &format!(
            "SELECT (count(*) = 0)::int::bigint AS n FROM payment_syncs \
             WHERE correlation_id = '{order}'"
        ),
    )
    .await;
}

#[tokio::test]
async fn a_lost_call_whose_payment_turns_up_declined_fails_the_order() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "late-declined-1", 500).await;
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "initial_order");
    assert_eq!(
        sync_state(&app, &order).await,
        (1, false, NOTHING_TURNED_UP.to_owned())
    );
    assert_eq!(
        gateway.uncommitted(&order),
        0,
        "committed after the first read"
    );
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "payment_failed");
    assert_eq!(credits_of(&app, &order).await, 0);
    assert_eq!(
        sync_row(&app, &order).await,
        0,
        "decided: nothing left to sync"
    );
}

#[tokio::test]
async fn a_lost_call_for_which_no_payment_ever_turns_up_is_listed_past_the_horizon() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "void-1", 500).await;
    for tries in 1..=3 {
        sync_due(&app, &worker, &order).await;
        assert_eq!(
            sync_state(&app, &order).await,
            (tries, false, NOTHING_TURNED_UP.to_owned())
        );
    }
    assert_eq!(listed_reason(&app, &order), None);
    past_the_horizon(&app, &order).await;
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "initial_order");
    assert_eq!(
        listed_reason(&app, &order).as_deref(),
        Some(NOTHING_TURNED_UP)
    );
    // The payment turns up after the horizon and its webhook comes: credited once, and the
    // order is no longer listed.
    let (status, body) = app
        .webhook(
            &capture("evt_after", &order, "pay_late"),
            WEBHOOK_SECRET,
            now(),
        )
        .await;
    assert_eq!((status, &body["outcome"]), (200, &json!("captured")));
    assert_eq!(credits_of(&app, &order).await, 1);
    assert_eq!(listed_reason(&app, &order), None);
}

/// A pay/session call whose answer was lost: the session turns up after the first read,
/// pending while the client is on the 3-D Secure page, and its capture is applied.
#[tokio::test]
async fn a_lost_session_call_is_synced_until_its_session_is_decided() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    gateway.lose_sessions();
    let order = checkout(&app).await;
    let (status, body) = app.pay_session(&order, SARA, &json!({})).await;
    assert_eq!(status, 500, "{body}");
    sync_due(&app, &worker, &order).await;
    assert_eq!(sync_state(&app, &order).await.2, NOTHING_TURNED_UP);
    sync_due(&app, &worker, &order).await;
    assert_eq!(
        sync_state(&app, &order).await.2,
        "a payment is still pending at the payment service"
    );
    gateway.set_status(&gateway.payment_of(&order), "captured");
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "successful");
    assert_eq!(credits_of(&app, &order).await, 1);
}

/// A lost call whose payment was found, captured for another amount (listed for refund),
/// leaves nothing to wait for, as before: the rule keeps only what may still turn up.
#[tokio::test]
async fn a_lost_call_whose_payment_turned_up_leaves_nothing_to_wait_for() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "card_visa_4242", 200).await;
    gateway.set_status(&gateway.payment_of(&order), "declined");
    let (status, _) = pay(&app, &order, "late-declined-2").await;
    assert_eq!(status, 500);
    sync_due(&app, &worker, &order).await;
    // The first payment's decline is superseded by the lost call; the lost call's payment
    // is not there yet.
    assert_eq!(status_of(&app, &order).await, "initial_order");
    assert_eq!(sync_state(&app, &order).await.2, NOTHING_TURNED_UP);
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "payment_failed");
    assert_eq!(sync_row(&app, &order).await, 0);
}

/// Reads by id and by reference that disagree on status or amount apply nothing, pass
/// after pass, and the order ends listed with both readings.
#[tokio::test]
async fn reads_that_disagree_apply_nothing_and_end_listed_with_both_readings() {
    for (lie, by_reference) in [
        (Lie::OtherStatusByReference, "declined 15.00 SAR"),
        (Lie::OtherAmountByReference, "captured 16.00 SAR"),
    ] {
        let (app, gateway) = quiet_app().await;
        let worker = worker(&app, &gateway, 100, "w");
        // An answered call whose payment is captured (its webhook lost), then a lost one:
        // the payments are read by id and by reference.
        let order = paid_with(&app, "silent-1", 200).await;
        assert_eq!(pay(&app, &order, "void-2").await.0, 500);
        gateway.set_lie(lie);
        let why = format!(
            "payment pay_1 read back differently: captured 15.00 SAR (by id), then \
             {by_reference} (by reference)"
        );
        for pass in 1..=DISAGREEMENTS_LISTED {
            sync_due(&app, &worker, &order).await;
            assert_eq!(status_of(&app, &order).await, "initial_order", "{lie:?}");
            let listed = pass == DISAGREEMENTS_LISTED;
            assert_eq!(
                sync_state(&app, &order).await,
                (i64::from(pass), listed, why.clone()),
                "{lie:?}, pass {pass}"
            );
        }
        assert_eq!(credits_of(&app, &order).await, 0, "{lie:?}");
        assert_eq!(
            app.count("SELECT count(*) AS n FROM payment_events").await,
            0,
            "{lie:?}: nothing applied from either reading"
        );
        assert_eq!(listed_reason(&app, &order), Some(why), "{lie:?}");
        let mut conn = worker.pool.get().await.unwrap();
        assert!(
            queue::take_due(&mut conn, HOUR, worker.settings.horizon)
                .await
                .unwrap()
                .is_none(),
            "{lie:?}: a listed order is read no more"
        );
    }
}

/// Disagreeing once is not listing: a pass that agrees applies, and the order is done.
#[tokio::test]
async fn reads_that_disagree_once_then_agree_are_applied() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "silent-1", 200).await;
    assert_eq!(pay(&app, &order, "void-2").await.0, 500);
    gateway.set_lie(Lie::OtherStatusByReference);
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "initial_order");
    gateway.set_lie(Lie::None);
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "successful");
    assert_eq!(credits_of(&app, &order).await, 1);
}

/// A payment service that pages a reference's payments: every page is read, so a lost
/// call's payment on a later page is found.
#[tokio::test]
async fn a_reference_read_that_pages_is_read_to_its_end() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "card_visa_4242", 200).await;
    assert_eq!(pay(&app, &order, "lost-2").await.0, 500);
    gateway.set_page_size(1);
    sync_due(&app, &worker, &order).await;
    assert_eq!(status_of(&app, &order).await, "successful");
    let reads: Vec<String> = gateway.reads().into_iter().map(|(_, r)| r).collect();
    assert_eq!(
        reads,
        [
            "/v1/payments/pay_1".to_owned(),
            format!("/v1/payments?reference={order}"),
            format!("/v1/payments?reference={order}&cursor=1"),
        ]
    );
}

/// A payment service that files another order's payment (its pay call was answered with it)
/// under a lost call's reference: the payment decides nothing here, and does not stand for
/// the lost call's payment.
#[tokio::test]
async fn another_orders_payment_filed_under_our_reference_decides_nothing() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let other = paid_with(&app, "card_visa_4242", 200).await;
    let payment = gateway.payment_of(&other);
    let order = paid_with(&app, "void-1", 500).await;
    gateway.set_reference(&payment, &order);
    gateway.set_status(&payment, "declined");
    sync_due(&app, &worker, &order).await;
    assert_eq!(
        status_of(&app, &order).await,
        "initial_order",
        "not failed by it"
    );
    assert_eq!(
        sync_state(&app, &order).await,
        (
            1,
            false,
            format!("payment {payment} read back under this order's reference is another order's")
        )
    );
    assert_eq!(
        app.count("SELECT count(*) AS n FROM payment_events").await,
        0
    );
}

/// A sync still holding an order's old schedule (it outlived its lease) cannot list or
/// postpone a schedule made after the order's row was deleted and made again: generations
/// are never handed out twice (found by review).
#[tokio::test]
async fn a_stale_sync_leaves_a_schedule_made_again_alone() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "card_visa_4242", 200).await;
    due_now(&app, &order).await;
    let stale = take(&worker, &order).await;
    app.sql(&format!(
        "DELETE FROM payment_syncs WHERE correlation_id = '{order}'"
    ))
    .await;
    assert_eq!(pay(&app, &order, "silent-2").await.0, 200);
    let mut conn = worker.pool.get().await.unwrap();
    queue::list(&mut conn, &stale, "stale").await.unwrap();
    queue::retry_later(&mut conn, &stale, HOUR * 24, "stale")
        .await
        .unwrap();
    drop(conn);
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM payment_syncs WHERE correlation_id = '{order}' \
             AND listed_at IS NULL AND last_error IS NULL AND due_at < now() + interval '1 hour'"
        ))
        .await,
        1,
        "the new schedule is as its attempt wrote it"
    );
}

/// Reads stop once the order's sync has taken its budget: the order is unsure, read again.
#[tokio::test]
async fn reads_past_their_budget_leave_the_order_unsure() {
    let (app, gateway) = quiet_app().await;
    let worker = worker(&app, &gateway, 100, "w");
    let order = paid_with(&app, "silent-1", 200).await;
    let id = order.parse().unwrap();
    let mut conn = worker.pool.get().await.unwrap();
    let plan = point_service::payments::sync::read::plan(&mut conn, id, WINDOW)
        .await
        .unwrap();
    drop(conn);
    let reading = point_service::payments::sync::read::read(
        &worker.payments,
        id,
        &plan,
        &mut worker.pace(),
        Duration::ZERO,
    )
    .await;
    assert_eq!(
        reading.unsure.as_deref(),
        Some("the payment service's reads took longer than 0 s")
    );
    assert!(gateway.reads().is_empty());
}

/// A pay call that never reached the payment service (no connection could be made) made no
/// payment: answered 500 as before, recorded `unsent`, and its order is not kept under sync
/// waiting for a payment that cannot exist (a payment-service outage would otherwise list
/// every order paid during it, 3 days later).
#[tokio::test]
async fn a_pay_call_that_never_reached_the_payment_service_leaves_nothing_to_wait_for() {
    let gateway = crate::gateway::Gateway::spawn();
    let app = spawn_app_with(Options {
        payment_url: Some(format!("http://127.0.0.1:{}", unused_port())),
        sync: point_service::config::SyncSettings {
            after: HOUR,
            interval: HOUR,
            reads_per_second: 100,
            horizon: Duration::from_secs(3 * 24 * 3600),
        },
        ..Options::default()
    })
    .await;
    let worker = worker(&app, &gateway, 100, "w");
    let (status, body) = pay(&app, &checkout(&app).await, "card_visa_4242").await;
    assert_eq!(
        (status, body),
        (
            500,
            testkit::envelopes::error_b("INTERNAL_ERROR", "Internal server error")
        ),
        "the answer is as before"
    );
    let unsent = app
        .count("SELECT count(*) AS n FROM payment_attempts WHERE state = 'unsent'")
        .await;
    assert_eq!(unsent, 1, "recorded as never sent");
    app.sql("UPDATE payment_syncs SET due_at = now()").await;
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let synced = point_service::payments::sync::task::pass(&worker, &mut worker.pace(), &stop)
        .await
        .unwrap();
    assert_eq!(synced, 1);
    assert!(gateway.reads().is_empty(), "nothing to look for");
    assert_eq!(
        app.count("SELECT count(*) AS n FROM payment_syncs").await,
        0,
        "nothing left to wait for"
    );
}
