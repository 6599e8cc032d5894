//! Tokens: forged JWTs, legacy tokens where only primary ones count and the reverse,
//! exchange-token's rules, inactive clients.

use serde_json::json;
use testkit::tokens::{Signature, jwt};

use crate::helpers::*;

/// A JWT with any header, signed with HMAC-SHA256 under `secret` (or unsigned).
fn forge(header: serde_json::Value, secret: Option<&str>) -> String {
    let claims = json!({"sub": SARA.to_string(), "typ": "primary", "iat": 1_700_000_000});
    let signature = secret.map_or(Signature::None, Signature::Hs256);
    jwt(&header, &claims, signature)
}

async fn verify_token(app: &TestApp, token: &str) -> (u16, serde_json::Value) {
    let (status, body) = answer(app.verify_token(Some(token)).await).await;
    (status, without_stack(body))
}

const UNAUTHORIZED: (u16, fn() -> serde_json::Value) =
    (401, || json!({"status": 401, "message": "Unauthorization"}));

#[tokio::test]
async fn our_own_forgery_helper_makes_a_token_the_service_accepts() {
    // Proves the forgeries below fail for the reason they test, not for a malformed token.
    let app = spawn_app().await;
    let genuine = forge(json!({"alg": "HS256", "typ": "JWT"}), Some(SECRET));
    assert_eq!(verify_token(&app, &genuine).await.0, 200);
}

#[tokio::test]
async fn forged_tokens_get_401() {
    let app = spawn_app().await;
    let forgeries = [
        (
            "another secret",
            forge(
                json!({"alg": "HS256", "typ": "JWT"}),
                Some("not-the-secret"),
            ),
        ),
        (
            "alg none",
            forge(json!({"alg": "none", "typ": "JWT"}), None),
        ),
        (
            "alg none, signed anyway",
            forge(json!({"alg": "none", "typ": "JWT"}), Some(SECRET)),
        ),
        (
            "RS256 header, HMAC with the secret",
            forge(json!({"alg": "RS256", "typ": "JWT"}), Some(SECRET)),
        ),
        (
            "HS512 header",
            forge(json!({"alg": "HS512", "typ": "JWT"}), Some(SECRET)),
        ),
        ("garbage", "not.a.jwt".to_owned()),
    ];
    for (what, token) in forgeries {
        assert_eq!(
            verify_token(&app, &token).await,
            (UNAUTHORIZED.0, (UNAUTHORIZED.1)()),
            "{what}"
        );
    }
}

#[tokio::test]
async fn a_token_of_another_kind_is_refused_on_each_side() {
    let app = spawn_app().await;
    assert_eq!(
        verify_token(&app, SARA_LEGACY).await.0,
        401,
        "legacy token on a primary-only route"
    );
    let (status, _) = answer(app.users(Some(&app.primary(SARA))).await).await;
    assert_eq!(
        status, 401,
        "primary token on the legacy-only caller lookup"
    );
    let (status, _) = answer(app.users(Some(SARA_LEGACY)).await).await;
    assert_eq!(status, 200);
    let (status, _) = answer(app.users(None).await).await;
    assert_eq!(status, 401);
    let (status, _) = answer(app.address_book(Some(SARA_LEGACY)).await).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn an_inactive_client_is_refused_with_either_token() {
    let app = spawn_app().await;
    assert_eq!(verify_token(&app, &app.primary(CLOSED)).await.0, 401);
    assert_eq!(answer(app.users(Some(CLOSED_LEGACY)).await).await.0, 401);
    let exchange = json!({"token": CLOSED_LEGACY, "target_platform": "primary"});
    assert_eq!(answer(app.exchange_token(&exchange).await).await.0, 401);
}

#[tokio::test]
async fn each_exchange_mints_a_new_legacy_token_and_older_ones_stay_valid() {
    let app = spawn_app().await;
    let primary = app.primary(SARA);
    let mut tokens = Vec::new();
    for _ in 0..2 {
        let (status, body) = answer(
            app.exchange_token(&json!({"token": primary, "target_platform": "legacy"}))
                .await,
        )
        .await;
        assert_eq!(status, 200);
        tokens.push(body["data"]["token"].as_str().unwrap().to_owned());
    }
    assert_ne!(tokens[0], tokens[1]);
    for token in &tokens {
        assert_eq!(answer(app.users(Some(token)).await).await.0, 200);
    }
}

#[tokio::test]
async fn exchange_checks_its_body() {
    let app = spawn_app().await;
    let cases = [
        (
            json!({"target_platform": "legacy"}),
            400,
            "token is required",
        ),
        (
            json!({"token": SARA_LEGACY, "target_platform": "ios"}),
            400,
            "target_platform must be primary or legacy",
        ),
        (
            json!({"token": "nobody-has-this-token", "target_platform": "primary"}),
            401,
            "Unauthorization",
        ),
    ];
    for (body, status, message) in cases {
        let (got, answer_body) = answer(app.exchange_token(&body).await).await;
        assert_eq!(
            (got, without_stack(answer_body)),
            (status, json!({"status": status, "message": message})),
            "{body}"
        );
    }
}

#[tokio::test]
async fn find_by_phone_needs_a_primary_token() {
    let app = spawn_app().await;
    let token = app.primary(SARA);
    let (status, body) = answer(
        app.find_client("contact_phone=%2B966500000002", Some(&token))
            .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        body["data"],
        json!({"client_id": OMAR, "first_name": "Omar", "last_name": "Ali"})
    );
    let (status, body) = answer(
        app.find_client("contact_phone=%2B966511111111", Some(&token))
            .await,
    )
    .await;
    assert_eq!(
        (status, without_stack(body)),
        (404, json!({"status": 404, "message": "client not found"}))
    );
    assert_eq!(
        answer(
            app.find_client("contact_phone=%2B966500000002", Some(SARA_LEGACY))
                .await
        )
        .await
        .0,
        401
    );
}
