//! `PUT /api/v1/clients/setting`: the push switch.

use serde_json::{Value, json};

use crate::helpers::*;

async fn set(app: &TestApp, body: Option<&str>) -> (u16, Value) {
    let (status, body) = answer(
        app.send(
            reqwest::Method::PUT,
            &paths::setting(),
            Some(&app.primary(SARA)),
            body,
        )
        .await,
    )
    .await;
    (status, without_stack(body))
}

#[tokio::test]
async fn only_1_string_1_and_true_switch_on() {
    let app = spawn_app().await;
    for (value, stored) in [
        (json!(0), 0),
        (json!(true), 1),
        (json!(null), 0),
        (json!("1"), 1),
        (json!("true"), 0),
        (json!(1), 1),
        (json!(2), 0),
    ] {
        let (status, body) = set(
            &app,
            Some(&json!({"client_id": SARA, "push_enabled": value}).to_string()),
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(keys(&body), PROFILE_KEYS);
        assert_eq!(body["push_enabled"], stored, "{value}");
    }
}

#[tokio::test]
async fn client_id_is_checked_first_and_push_enabled_must_be_present() {
    let app = spawn_app().await;
    let mismatch = (
        400,
        json!({"status": 400, "message": "client_id does not match the authenticated client"}),
    );
    assert_eq!(
        set(&app, None).await,
        mismatch,
        "no body reads as an empty object"
    );
    assert_eq!(set(&app, Some("{}")).await, mismatch);
    assert_eq!(
        set(&app, Some(r#"{"client_id": 1002, "push_enabled": 1}"#)).await,
        mismatch
    );
    assert_eq!(set(&app, Some(r#"{"push_enabled": 1}"#)).await, mismatch);
    assert_eq!(
        set(&app, Some(r#"{"client_id": "1001"}"#)).await,
        (
            400,
            json!({"status": 400, "message": "push_enabled is required"})
        )
    );
}

#[tokio::test]
async fn only_push_enabled_changes() {
    let app = spawn_app().await;
    let (_, body) = set(
        &app,
        Some(r#"{"client_id": 1001, "push_enabled": 0, "first_name": "X", "sex": 1}"#),
    )
    .await;
    assert_eq!(
        (
            body["first_name"].clone(),
            body["sex"].clone(),
            body["push_enabled"].clone()
        ),
        (json!("Sara"), json!(2), json!(0))
    );
}

#[tokio::test]
async fn the_setting_route_needs_an_active_primary_caller() {
    let app = spawn_app().await;
    for token in [
        None,
        Some(SARA_LEGACY.to_owned()),
        Some(app.primary(CLOSED)),
    ] {
        let response = app
            .send(
                reqwest::Method::PUT,
                &paths::setting(),
                token.as_deref(),
                Some(r#"{"client_id": 1001, "push_enabled": 1}"#),
            )
            .await;
        assert_eq!(answer(response).await.0, 401, "{token:?}");
    }
}
