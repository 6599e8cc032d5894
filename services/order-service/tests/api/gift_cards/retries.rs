//! A credit that fails is not lost: the service's own retry task and the owner's next request
//! resume it, exactly once across replicas and leases, with the code's exact points.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use actix_web::{App, HttpResponse, web};
use diesel_async::RunQueryDsl;
use order_service::gift_cards::retry;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::helpers::*;

use super::ledger::*;

/// The credit fails twice, then lands: the service's own retry task credits it, once; the
/// client's next request is the one 200, the one after is 409.
#[tokio::test]
async fn a_failed_credit_is_retried_by_the_service_until_it_lands_once() {
    let ledger = Ledger::start();
    ledger.fail_next(2);
    let app = spawn_app_with(on_ledger(&ledger, true)).await;
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        error_c(502, "The points could not be credited yet, try again")
    );
    wait_until_none_pending(&app).await;
    assert_eq!(
        ledger.sent(),
        BTreeMap::from([("gift-card:WELCOME-100".to_owned(), 3)])
    );
    assert_eq!(
        ledger.credited(),
        BTreeMap::from([("gift-card:WELCOME-100".to_owned(), 1)])
    );
    assert_eq!(
        redemption(&app, "WELCOME-100").await,
        Row {
            status: "credited".into(),
            attempts: 3,
            answered: false,
            held: false
        }
    );
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        (
            200,
            json!({"message": "The code was redeemed", "code": "WELCOME-100", "points": "100"})
        ),
        "the client's retry is the one 200"
    );
    assert_eq!(app.redeem(1001, "WELCOME-100").await, error_c(409, USED));
    assert_eq!(app.redeem(1002, "WELCOME-100").await, error_c(409, USED));
    assert_eq!(
        ledger.sent()["gift-card:WELCOME-100"],
        3,
        "nothing sent after it landed"
    );
    let metrics = app.get("/metrics").await.1;
    let metrics = metrics.as_str().unwrap();
    for line in [
        r#"gift_card_credit_attempts_total{by="retry",outcome="credited"}"#,
        r#"gift_card_credit_attempts_total{by="request",outcome="failed"}"#,
        "gift_card_credits_pending",
        "gift_card_credit_oldest_pending_seconds",
    ] {
        assert!(metrics.contains(line), "/metrics has {line}");
    }
}

/// While the retry task is crediting a redemption (the ledger holds its call), no other
/// replica takes it and its owner gets 409; once it lands, the owner's next request is
/// the one 200.
#[tokio::test]
async fn a_credit_in_flight_is_taken_by_no_other_replica_nor_request() {
    let ledger = Ledger::start();
    let app = spawn_app_with(on_ledger(&ledger, true)).await;
    ledger.hold();
    // As a request leaves it whose credit failed.
    app.sql(
        "INSERT INTO gift_card_redemptions \
             (code, client_id, points, credit_target, credit_reference, attempts, last_error) \
         VALUES ('WELCOME-100', 1001, 100, 'point_service', 'gift-card:WELCOME-100', 1, \
                 'credit answered 503 Service Unavailable')",
    )
    .await;
    ledger.wait_for_calls(1).await;
    assert_eq!(
        other_replica_pass(&app, &ledger).await,
        retry::Pass::default()
    );
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        error_c(409, IN_PROGRESS)
    );
    assert_eq!(app.redeem(1002, "WELCOME-100").await, error_c(409, USED));
    ledger.release();
    wait_until_none_pending(&app).await;
    assert_eq!(app.redeem(1001, "WELCOME-100").await.0, 200);
    assert_eq!(app.redeem(1001, "WELCOME-100").await, error_c(409, USED));
    assert_eq!(
        ledger.sent(),
        BTreeMap::from([("gift-card:WELCOME-100".to_owned(), 1)])
    );
    assert!(ledger.state.lock().unwrap().overlaps.is_empty());
}

/// Two app instances on one database, both retrying: thirty pending redemptions are each
/// sent exactly once, never two calls for one reference at a time.
#[tokio::test]
async fn two_replicas_never_send_one_credit_twice() {
    let ledger = Ledger::start();
    let options = on_ledger(&ledger, true);
    let app = spawn_app_with(on_ledger(&ledger, true)).await;
    start(app.database.url(), &ledger.url, &options);
    app.sql(
        "INSERT INTO gift_card_codes (code, points, active) \
             SELECT 'BULK-' || i, 10, true FROM generate_series(1, 30) AS i; \
         INSERT INTO gift_card_redemptions \
                 (code, client_id, points, credit_target, credit_reference) \
             SELECT 'BULK-' || i, 3000 + i, 10, 'point_service', 'gift-card:BULK-' || i \
             FROM generate_series(1, 30) AS i",
    )
    .await;
    wait_until_none_pending(&app).await;
    let sent = ledger.sent();
    assert_eq!(sent.len(), 30);
    assert!(
        sent.values().all(|&n| n == 1),
        "each reference sent once: {sent:?}"
    );
    assert!(ledger.state.lock().unwrap().overlaps.is_empty());
    assert_eq!(
        count(
            &app,
            "SELECT count(*) AS n FROM gift_card_redemptions WHERE status = 'credited' AND attempts = 1"
        )
        .await,
        30
    );
}

/// A holder that died mid-credit leaves its lease: nobody takes the redemption until the
/// lease runs out, then a retry task sends the same reference.
#[tokio::test]
async fn a_dead_holders_redemption_is_resumed_once_its_lease_runs_out() {
    let ledger = Ledger::start();
    let app = spawn_app_with(on_ledger(&ledger, false)).await;
    app.sql(
        "INSERT INTO gift_card_redemptions \
             (code, client_id, points, credit_target, credit_reference, attempts, lease_until) \
         VALUES ('WELCOME-100', 1001, 100, 'point_service', 'gift-card:WELCOME-100', 1, \
                 now() + interval '1 hour')",
    )
    .await;
    assert_eq!(
        other_replica_pass(&app, &ledger).await,
        retry::Pass::default()
    );
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        error_c(409, IN_PROGRESS)
    );
    app.sql("UPDATE gift_card_redemptions SET lease_until = now() - interval '1 second'")
        .await;
    assert_eq!(
        other_replica_pass(&app, &ledger).await,
        retry::Pass {
            tried: 1,
            credited: 1
        }
    );
    assert_eq!(
        ledger.sent(),
        BTreeMap::from([("gift-card:WELCOME-100".to_owned(), 1)])
    );
    assert_eq!(app.redeem(1001, "WELCOME-100").await.0, 200);
}

/// The legacy credit carries the reference in its body and as Idempotency-Key, the same
/// on the retry after a failure, so the legacy side can apply it once.
#[tokio::test]
async fn the_legacy_credit_carries_the_reference_on_every_try() {
    let ledger = Ledger::start();
    let app = spawn_app_with(Options {
        use_point_service: false,
        legacy_url: Some(ledger.url.clone()),
        ..Options::default()
    })
    .await;
    ledger.fail_next(1);
    assert_eq!(app.redeem(1001, "WELCOME-100").await.0, 502);
    assert_eq!(app.redeem(1001, "WELCOME-100").await.0, 200);
    let requests = ledger.state.lock().unwrap().requests.clone();
    let sent = json!({"client_id": 1001, "points": "100", "reference": "gift-card:WELCOME-100"});
    let expected = (
        "/api/v1/points/add".to_owned(),
        Some("gift-card:WELCOME-100".to_owned()),
        sent,
    );
    assert_eq!(requests, vec![expected.clone(), expected]);
}

/// The retry task ends when asked to (as `serve` asks it on SIGTERM or SIGINT), even in the
/// middle of its wait between passes.
#[tokio::test]
async fn the_retry_task_stops_when_asked() {
    let ledger = Ledger::start();
    let app = spawn_app_with(on_ledger(&ledger, false)).await;
    let (pool, credit) = other_replica(&app, &ledger);
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(retry::run(
        pool,
        credit,
        Options::default().gift_card_retry,
        stopped,
    ));
    stop.send(true).unwrap();
    tokio::time::timeout(WAIT, task)
        .await
        .expect("the task ends")
        .unwrap();
}

/// A code deactivated while its redemption is pending: the owner's next request resumes
/// it (a redemption that exists decides), it is no wrong guess.
#[tokio::test]
async fn a_pending_redemption_of_a_code_deactivated_since_is_resumed_not_404() {
    let app = spawn_app().await;
    app.credits_fail.store(true, Ordering::SeqCst);
    assert_eq!(app.redeem(1001, "WELCOME-100").await.0, 502);
    let mut conn = app.database.connect().await;
    diesel::sql_query("UPDATE gift_card_codes SET active = false WHERE code = 'WELCOME-100'")
        .execute(&mut conn)
        .await
        .unwrap();
    app.credits_fail.store(false, Ordering::SeqCst);
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        (
            200,
            json!({"message": "The code was redeemed", "code": "WELCOME-100", "points": "100"})
        )
    );
    assert_eq!(
        app.redeem(1002, "WELCOME-100").await,
        error_c(409, USED),
        "someone else is told it is used, not that it does not exist"
    );
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM gift_card_tries").await,
        0,
        "no wrong guess counted"
    );
    assert_eq!(app.credits.lock().unwrap().len(), 1);
}

/// The credit carries the code's exact points, not the answer's 4-decimal text: 1.23456
/// credits 1.23456 (not 1.2346, points invented), 0.00001 credits 0.00001 (not "0", which
/// the point service refuses). The answer's `points` stays the spec's text.
#[tokio::test]
async fn the_credit_carries_the_exact_points() {
    let app = spawn_app().await;
    let mut conn = app.database.connect().await;
    diesel::sql_query(
        "INSERT INTO gift_card_codes (code, points, active) VALUES ('EXACT', 1.23456, true), ('TINY', 0.00001, true)",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    assert_eq!(
        app.redeem(1001, "EXACT").await,
        (
            200,
            json!({"message": "The code was redeemed", "code": "EXACT", "points": "1.2346"})
        )
    );
    assert_eq!(
        app.redeem(1001, "TINY").await,
        (
            200,
            json!({"message": "The code was redeemed", "code": "TINY", "points": "0"})
        )
    );
    let sent: Vec<Value> = app
        .credits
        .lock()
        .unwrap()
        .iter()
        .map(|c| c["points"].clone())
        .collect();
    assert_eq!(sent, vec![json!("1.23456"), json!("0.00001")]);
}

/// A credit the point service refuses (a 4xx other than 409 and 429) is not hammered: its
/// next try by the retry task is hours away, where a failure that may heal waits the
/// ordinary backoff.
#[tokio::test]
async fn a_refused_credit_waits_long_before_its_next_try() {
    let refusing = server::spawn_local(|| {
        App::new().default_service(web::to(|| async {
            HttpResponse::UnprocessableEntity().json(json!({"message": "no such client"}))
        }))
    })
    .unwrap();
    for (url, code, refused) in [
        (Some(refusing), "WELCOME-100", true),
        (None, "RAMADAN-250", false),
    ] {
        let mut options = Options {
            point_service_url: url,
            ..Options::default()
        };
        // The ordinary first backoff: one interval.
        options.gift_card_retry.interval = Duration::from_secs(60);
        let app = spawn_app_with(options).await;
        app.credits_fail.store(true, Ordering::SeqCst);
        assert_eq!(app.redeem(1001, code).await.0, 502, "{code}");
        assert_eq!(
            count(
                &app,
                "SELECT count(*) AS n FROM gift_card_redemptions \
                 WHERE status = 'pending' AND next_attempt_at > now() + interval '1 hour'"
            )
            .await,
            i64::from(refused),
            "{code}"
        );
        if refused {
            assert_eq!(
                count(
                    &app,
                    "SELECT count(*) AS n FROM gift_card_redemptions \
                     WHERE last_error = 'credit refused with 422'"
                )
                .await,
                1
            );
        }
    }
}
