//! Many requests at once: one client's retries, different clients, bursts of wrong codes
//! (the wrong-code limits hold exactly, whatever arrives together).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use diesel::sql_types::Integer;
use diesel_async::RunQueryDsl;
use futures_util::StreamExt;
use futures_util::future::join_all;
use futures_util::stream::FuturesUnordered;
use order_service::gift_cards::tries;
use serde_json::json;

use crate::helpers::*;

use super::ledger::*;

/// The same client's concurrent retries: while the first is being credited (the ledger
/// holds its call), every other one answers 409; then the first answers the one 200.
#[tokio::test]
async fn concurrent_retries_of_one_client_get_one_200_and_one_credit_call() {
    let ledger = Ledger::start();
    let app = spawn_app_with(on_ledger(&ledger, false)).await;
    ledger.hold();
    let mut answers: FuturesUnordered<_> =
        (0..9).map(|_| app.redeem(1001, "RAMADAN-250")).collect();
    let mut early = Vec::new();
    for _ in 0..8 {
        let next = tokio::time::timeout(WAIT, answers.next()).await;
        early.push(
            next.expect("the others answer while the credit is held")
                .unwrap(),
        );
    }
    assert_eq!(early, vec![error_c(409, IN_PROGRESS); 8]);
    assert_eq!(app.redeem(1002, "RAMADAN-250").await, error_c(409, USED));
    ledger.release();
    let last = answers.next().await.unwrap();
    assert_eq!(
        last,
        (
            200,
            json!({"message": "The code was redeemed", "code": "RAMADAN-250", "points": "250"})
        )
    );
    assert_eq!(app.redeem(1001, "RAMADAN-250").await, error_c(409, USED));
    assert_eq!(
        ledger.sent(),
        BTreeMap::from([("gift-card:RAMADAN-250".to_owned(), 1)])
    );
    assert_eq!(
        redemption(&app, "RAMADAN-250").await,
        Row {
            status: "credited".into(),
            attempts: 1,
            answered: true,
            held: false
        }
    );
}

/// Different clients at once: one holds the code, the rest are told it is used.
#[tokio::test]
async fn concurrent_redemptions_by_different_clients_get_one_200() {
    let ledger = Ledger::start();
    let app = spawn_app_with(on_ledger(&ledger, false)).await;
    ledger.hold();
    let mut answers: FuturesUnordered<_> = (0..9)
        .map(|i| app.redeem(5000 + i, "WELCOME-100"))
        .collect();
    let mut early = Vec::new();
    for _ in 0..8 {
        let next = tokio::time::timeout(WAIT, answers.next()).await;
        early.push(
            next.expect("the others answer while the credit is held")
                .unwrap(),
        );
    }
    assert_eq!(early, vec![error_c(409, USED); 8]);
    ledger.release();
    assert_eq!(answers.next().await.unwrap().0, 200);
    assert_eq!(
        ledger.sent(),
        BTreeMap::from([("gift-card:WELCOME-100".to_owned(), 1)])
    );
}

/// A burst of parallel wrong codes from one client stops exactly at its limit.
#[tokio::test]
async fn a_burst_of_wrong_codes_from_one_client_stops_at_the_limit() {
    let app = spawn_app_with(Options {
        tries_per_client: 5,
        ..Options::default()
    })
    .await;
    let guesses: Vec<String> = (0..40).map(|i| format!("GUESS-{i}")).collect();
    let answers = join_all(guesses.iter().map(|code| app.redeem(1001, code))).await;
    let statuses = answers.iter().fold(BTreeMap::new(), |mut by, (status, _)| {
        *by.entry(*status).or_insert(0) += 1;
        by
    });
    assert_eq!(statuses, BTreeMap::from([(404, 5), (429, 35)]));
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM gift_card_tries").await,
        5
    );
}

/// And from one address, whichever clients it speaks for.
#[tokio::test]
async fn a_burst_of_wrong_codes_from_one_address_stops_at_the_limit() {
    let app = spawn_app_with(Options {
        tries_per_ip: 5,
        tries_per_client: 1000,
        ..Options::default()
    })
    .await;
    let guess = |i: i64| {
        let request = app
            .client
            .post(app.url(&paths::gift_card_code()))
            .bearer_auth(token(4000 + i))
            .header("x-forwarded-for", "203.0.113.9")
            .json(&json!({"code": format!("GUESS-{i}")}));
        async move { request.send().await.unwrap().status().as_u16() }
    };
    let statuses =
        join_all((0..40).map(guess))
            .await
            .into_iter()
            .fold(BTreeMap::new(), |mut by, status| {
                *by.entry(status).or_insert(0) += 1;
                by
            });
    assert_eq!(statuses, BTreeMap::from([(404, 5), (429, 35)]));
}

/// Requests waiting for the client lock of the wrong-code limits, on `app`'s database.
async fn waiting_for_client_lock(app: &TestApp) -> i64 {
    count(
        app,
        &format!(
            "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted \
             AND classid = {} AND objsubid = 2 \
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            tries::CLIENT_LOCK
        ),
    )
    .await
}

/// Waits until `n` requests wait for the client lock, or `done` is set.
async fn until_waiting(app: &TestApp, n: i64, done: &AtomicBool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !done.load(Ordering::SeqCst) && waiting_for_client_lock(app).await < n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{n} requests never waited for the client lock"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// At one wrong code below the limit, a burst of 30 requests gets at most one code looked
/// at: the right code sent among 29 wrong ones is not redeemed once a wrong one reached the
/// limit. The test holds the client's lock (a gate) until the 29 wrong requests and then
/// the right one wait for it, so the right one comes last.
#[tokio::test]
async fn a_burst_at_the_limit_gets_one_code_looked_at_even_with_the_right_one_among_them() {
    let app = spawn_app_with(Options {
        tries_per_client: 5,
        pool_size: 40,
        ..Options::default()
    })
    .await;
    for i in 0..4 {
        assert_eq!(app.redeem(1001, &format!("EARLIER-{i}")).await.0, 404);
    }
    let mut gate = app.database.connect().await;
    diesel::sql_query("SELECT pg_advisory_lock($1, hashtext('1001'))")
        .bind::<Integer, _>(tries::CLIENT_LOCK)
        .execute(&mut gate)
        .await
        .unwrap();
    let right_answered = AtomicBool::new(false);
    let wrong = join_all((0..29).map(|i| {
        let code = format!("GUESS-{i}");
        let app = &app;
        async move { app.redeem(1001, &code).await.0 }
    }));
    let right = async {
        until_waiting(&app, 29, &AtomicBool::new(false)).await;
        let status = app.redeem(1001, "WELCOME-100").await.0;
        right_answered.store(true, Ordering::SeqCst);
        status
    };
    let gatekeeper = async {
        // The old code looked the right one up without waiting: it answers at once.
        until_waiting(&app, 30, &right_answered).await;
        diesel::sql_query("SELECT pg_advisory_unlock($1, hashtext('1001'))")
            .bind::<Integer, _>(tries::CLIENT_LOCK)
            .execute(&mut gate)
            .await
            .unwrap();
    };
    let (wrong, right, ()) = tokio::join!(wrong, right, gatekeeper);
    let statuses = wrong
        .into_iter()
        .chain([right])
        .fold(BTreeMap::new(), |mut by, status| {
            *by.entry(status).or_insert(0) += 1;
            by
        });
    assert_eq!(
        statuses,
        BTreeMap::from([(404, 1), (429, 29)]),
        "one code looked at (404s + 200s), the rest 429"
    );
    assert_eq!(right, 429);
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM gift_card_redemptions").await,
        0
    );
    assert!(app.credits.lock().unwrap().is_empty());
}
