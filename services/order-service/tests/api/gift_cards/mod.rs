//! `POST /gift-card-code`: a code credits once, unknown and inactive codes, the route's
//! 401 and 500; the credit's failures, retries and replicas ([`retries`]); where each
//! redemption is credited and under what reference, across a switch of
//! `USE_POINT_SERVICE` ([`targets`]); many requests at once ([`bursts`]), over a point
//! service that records every credit ([`ledger`]).

mod bursts;
mod events;
mod ledger;
mod retries;
mod retry_after;
mod targets;

use futures_util::future::join_all;
use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn a_code_credits_through_the_point_service_once() {
    let app = spawn_app().await;
    assert_eq!(
        app.redeem(1001, " WELCOME-100 ").await,
        (
            200,
            json!({"message": "The code was redeemed", "code": "WELCOME-100", "points": "100"})
        )
    );
    let credits = app.credits.lock().unwrap().clone();
    assert_eq!(credits.len(), 1);
    assert_eq!(
        (
            credits[0]["client_id"].clone(),
            credits[0]["points"].clone(),
            credits[0]["reason"].clone(),
            credits[0]["caller"].clone()
        ),
        (
            json!(1001),
            json!("100"),
            json!("gift_card"),
            json!("order-service")
        )
    );
    assert_eq!(credits[0]["reference"], "gift-card:WELCOME-100");
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        error_c(409, "The code has already been used")
    );
    assert_eq!(
        app.redeem(1002, "WELCOME-100").await,
        error_c(409, "The code has already been used")
    );
    assert_eq!(app.credits.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn unknown_or_inactive_codes_are_404_and_missing_tokens_401() {
    let app = spawn_app().await;
    assert_eq!(
        app.redeem(1001, "NOPE").await,
        error_c(404, "The code not exist")
    );
    assert_eq!(
        app.redeem(1001, "OLD-50").await,
        error_c(404, "The code not exist")
    );
    let response = app
        .client
        .post(app.url(&paths::gift_card_code()))
        .json(&json!({"code": "WELCOME-100"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer(response).await,
        error_c(401, "Missing or invalid authorization header")
    );
    let response = app
        .client
        .post(app.url(&paths::gift_card_code()))
        .bearer_auth("bad")
        .json(&json!({"code": "X"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer(response).await,
        error_c(401, "Invalid or expired token")
    );
    let response = app
        .client
        .post(app.url(&paths::gift_card_code()))
        .bearer_auth(token(1001))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer(response).await, error_c(400, "code is required"));
}

#[tokio::test]
async fn wrong_codes_are_limited_per_client() {
    let app = spawn_app_with(Options {
        tries_per_client: 3,
        ..Options::default()
    })
    .await;
    for _ in 0..3 {
        assert_eq!(app.redeem(1001, "GUESS").await.0, 404);
    }
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        error_c(429, "Too many attempts, try again later")
    );
    assert_eq!(
        app.redeem(1002, "WELCOME-100").await.0,
        200,
        "another client is not limited"
    );
}

#[tokio::test]
async fn twenty_concurrent_tries_claim_the_code_once() {
    let app = spawn_app().await;
    let tries = (0..20).map(|i| app.redeem(2000 + i, "RAMADAN-250"));
    let outcomes = join_all(tries).await;
    let ok = outcomes.iter().filter(|(s, _)| *s == 200).count();
    let used = outcomes.iter().filter(|(s, _)| *s == 409).count();
    assert_eq!((ok, used), (1, 19));
    assert_eq!(app.credits.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_failed_credit_stays_pending_and_the_retry_credits_the_same_redemption() {
    let app = spawn_app().await;
    app.credits_fail
        .store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        error_c(502, "The points could not be credited yet, try again")
    );
    assert_eq!(
        app.redeem(1002, "WELCOME-100").await.0,
        409,
        "the code is this client's now"
    );
    app.credits_fail
        .store(false, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await.0,
        200,
        "the retry goes on with the pending redemption"
    );
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await.0,
        409,
        "and once credited, the code is used"
    );
    let credits = app.credits.lock().unwrap().clone();
    assert_eq!(credits.len(), 1);
    assert_eq!(credits[0]["reference"], "gift-card:WELCOME-100");
}

/// The spec's row: 500 `AUTH_SERVICE_URL not set`, in production too (its text is not an
/// internal detail to hide, it tells the operator what to fix).
#[tokio::test]
async fn without_auth_service_url_the_route_answers_500_naming_it_even_in_production() {
    let app = spawn_app_with(Options {
        auth_service: false,
        app_env: AppEnv::Production,
        ..Options::default()
    })
    .await;
    let response = app
        .client
        .post(app.url(&paths::gift_card_code()))
        .bearer_auth(token(1001))
        .json(&json!({"code": "WELCOME-100"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(
        response.text().await.unwrap(),
        r#"{"message":"AUTH_SERVICE_URL not set","statusCode":500}"#
    );
    assert!(app.credits.lock().unwrap().is_empty());
}
