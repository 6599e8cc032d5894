//! A withdrawal racing redemptions of the batch's codes: every code ends either redeemed
//! (its redemption answered 200 and it is credited) or withdrawn (its redemption answered
//! 404), never both, never credited without its 200.

use reqwest::Method;
use serde_json::json;

use super::call;
use super::gift_codes::{codes, csv_codes, issue};
use crate::helpers::*;

#[tokio::test]
async fn every_code_is_either_redeemed_or_withdrawn() {
    for round in 0..3 {
        let app = spawn_app().await;
        let batch = issue(
            &app,
            json!({"reference": format!("race-{round}"), "count": 12, "points": "3"}),
        )
        .await;
        let id = batch["id"].as_i64().unwrap();
        let printed = csv_codes(&app, id).await;
        let redemptions = printed.iter().enumerate().map(|(i, code)| {
            let app = &app;
            async move { (code.clone(), app.redeem(2000 + i as i64, code).await.0) }
        });
        let withdrawal = call(Method::DELETE, &format!("/gift-code-batches/{id}")).send(&app);
        let (answers, (status, _)) =
            tokio::join!(futures_util::future::join_all(redemptions), withdrawal);
        assert_eq!(status, 200);
        let listed = codes(&app, id).await;
        for (code, answered) in answers {
            let state = listed["codes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["code"] == code.as_str())
                .unwrap()["state"]
                .clone();
            match answered {
                200 => assert_eq!(state, "credited", "{code}"),
                404 => assert_eq!(state, "withdrawn", "{code}"),
                other => panic!("{code}: {other}"),
            }
        }
        let credited = listed["batch"]["codes"]["credited"].as_u64().unwrap();
        assert_eq!(app.credits.lock().unwrap().len() as u64, credited);
    }
}

/// Waits until a backend of the test's database waits on a lock: the request sent is
/// blocked where the test holds one.
async fn until_a_request_waits_on_a_lock(app: &TestApp) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while app
        .database
        .count(
            "SELECT count(*) AS n FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .await
        == 0
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no request waited on the lock"
        );
        tokio::task::yield_now().await;
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_withdrawal_waits_for_a_redemption_in_flight_and_keeps_its_code() {
    use diesel_async::SimpleAsyncConnection;
    let app = spawn_app().await;
    let batch = issue(
        &app,
        json!({"reference": "held", "count": 2, "points": "3"}),
    )
    .await;
    let id = batch["id"].as_i64().unwrap();
    let printed = csv_codes(&app, id).await;
    let code = &printed[0];
    // A redemption of `code` caught between its claim and its commit, as a request makes it.
    let mut claim = app.database.connect().await;
    claim
        .batch_execute(&format!(
            "BEGIN; \
             SELECT points FROM gift_card_codes WHERE code = '{code}' AND active FOR SHARE; \
             INSERT INTO gift_card_redemptions (code, client_id, points, credit_target, credit_reference) \
             VALUES ('{code}', 3001, 3, 'point_service', 'gift-card:{code}');"
        ))
        .await
        .unwrap();
    let withdrawal = call(Method::DELETE, &format!("/gift-code-batches/{id}")).send(&app);
    let commit = async {
        until_a_request_waits_on_a_lock(&app).await;
        claim.batch_execute("COMMIT").await.unwrap();
    };
    let ((status, after), ()) = tokio::join!(withdrawal, commit);
    assert_eq!(status, 200, "{after}");
    assert_eq!(
        after["codes"],
        json!({"unused": 0, "beingCredited": 1, "credited": 0, "withdrawn": 1, "expired": 0})
    );
    // The code redeemed was not withdrawn under its redemption.
    let kept = format!(
        "SELECT count(*) AS n FROM gift_card_codes WHERE code = '{code}' AND active AND withdrawn_at IS NULL"
    );
    assert_eq!(app.database.count(&kept).await, 1);
}

#[tokio::test]
async fn a_redemption_waits_for_a_withdrawal_in_flight_and_finds_no_code() {
    use diesel_async::SimpleAsyncConnection;
    let app = spawn_app().await;
    let batch = issue(
        &app,
        json!({"reference": "held", "count": 1, "points": "3"}),
    )
    .await;
    let id = batch["id"].as_i64().unwrap();
    let code = csv_codes(&app, id).await.remove(0);
    // A withdrawal caught before its commit, as the back office makes it.
    let mut withdrawal = app.database.connect().await;
    withdrawal
        .batch_execute(&format!(
            "BEGIN; \
             SELECT code FROM gift_card_codes WHERE batch_id = {id} AND active FOR UPDATE; \
             UPDATE gift_card_codes SET active = false, withdrawn_at = now() WHERE batch_id = {id};"
        ))
        .await
        .unwrap();
    let redemption = app.redeem(3002, &code);
    let commit = async {
        until_a_request_waits_on_a_lock(&app).await;
        withdrawal.batch_execute("COMMIT").await.unwrap();
    };
    let (answered, ()) = tokio::join!(redemption, commit);
    assert_eq!(answered, error_c(404, "The code not exist"));
    assert!(app.credits.lock().unwrap().is_empty());
    assert_eq!(codes(&app, id).await["batch"]["codes"]["withdrawn"], 1);
}

#[tokio::test]
async fn of_two_withdrawals_at_once_the_trail_has_the_one_that_withdrew() {
    let app = spawn_app().await;
    let batch = issue(
        &app,
        json!({"reference": "twice", "count": 4, "points": "1"}),
    )
    .await;
    let path = format!("/gift-code-batches/{}", batch["id"]);
    let (a, b) = tokio::join!(
        call(Method::DELETE, &path).send(&app),
        call(Method::DELETE, &path).send(&app)
    );
    assert_eq!((a.0, b.0), (200, 200));
    let withdrawals = app
        .database
        .count(
            "SELECT count(*) AS n FROM back_office_audit WHERE action = 'gift-code-batch.withdraw'",
        )
        .await;
    assert_eq!(withdrawals, 1);
    let change = super::newest_change(&app).await;
    assert_eq!(change["before"]["codes"]["unused"], 4);
    assert_eq!(change["after"]["codes"]["withdrawn"], 4);
}
