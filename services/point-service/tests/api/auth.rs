//! The caller lookup: the four 401s and the 500 of the Errors table.

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn no_header_or_not_bearer_is_missing_or_invalid() {
    let app = spawn_app().await;
    let expected = (
        401,
        error_b("UNAUTHORIZED", "Missing or invalid authorization header"),
    );
    assert_eq!(
        answer(
            app.client
                .get(app.url(&paths::balance()))
                .send()
                .await
                .unwrap()
        )
        .await,
        expected
    );
    let basic = app
        .client
        .get(app.url(&paths::balance()))
        .header("authorization", "Basic abc")
        .send()
        .await
        .unwrap();
    assert_eq!(answer(basic).await, expected);
}

#[tokio::test]
async fn a_token_the_auth_service_refuses_is_invalid_or_expired() {
    let app = spawn_app().await;
    let response = app
        .client
        .get(app.url(&paths::balance()))
        .bearer_auth("eyJ.primary.jwt")
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer(response).await,
        (401, error_b("UNAUTHORIZED", "Invalid or expired token"))
    );
}

#[tokio::test]
async fn an_unreachable_auth_service_looks_like_a_bad_token_with_its_error_text() {
    let app = spawn_app_with(Options {
        auth_unreachable: true,
        ..Options::default()
    })
    .await;
    let (status, body) = app.balance(SARA).await;
    assert_eq!(status, 401);
    assert_eq!(body["error"]["code"], "UNAUTHORIZED");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("auth service unreachable: "),
        "{message}"
    );
    assert!(message.len() > "auth service unreachable: ".len());
}

#[tokio::test]
async fn an_answer_without_a_numeric_client_id_is_refused() {
    let app = spawn_app_with(Options {
        auth: Some(AuthMode::NoClientId),
        ..Options::default()
    })
    .await;
    assert_eq!(
        app.balance(SARA).await,
        (
            401,
            error_b("UNAUTHORIZED", "auth response missing numeric client id")
        )
    );
}

#[tokio::test]
async fn without_auth_service_url_the_point_routes_answer_500() {
    let app = spawn_app_with(Options {
        auth: None,
        ..Options::default()
    })
    .await;
    assert_eq!(
        app.balance(SARA).await,
        (500, error_b("INTERNAL_ERROR", "AUTH_SERVICE_URL not set"))
    );
    assert_eq!(app.order(SARA, &json!({})).await.0, 500);
}

#[tokio::test]
async fn an_unexpected_failure_is_500_internal_server_error() {
    let app = spawn_app().await;
    app.sql("ALTER TABLE point_accounts RENAME COLUMN balance TO gone")
        .await;
    assert_eq!(
        app.balance(SARA).await,
        (500, error_b("INTERNAL_ERROR", "Internal server error"))
    );
}
