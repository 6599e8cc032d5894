//! `PUT /api/v1/clients/{client_id}`: every rule and message, the check order, the
//! coercions, and the answers per environment.

use serde_json::{Value, json};
use server::AppEnv;

use crate::helpers::*;

async fn update(app: &TestApp, body: Value) -> (u16, Value) {
    let (status, body) = answer(
        app.update_profile(SARA, Some(&app.primary(SARA)), &body)
            .await,
    )
    .await;
    (status, without_stack(body))
}

fn refused(message: &str) -> (u16, Value) {
    (400, json!({"status": 400, "message": message}))
}

async fn profile(app: &TestApp) -> Value {
    answer(app.verify_token(Some(&app.primary(SARA))).await)
        .await
        .1
}

#[tokio::test]
async fn a_partial_update_changes_only_the_keys_sent_and_answers_the_profile() {
    let app = spawn_app().await;
    let before = profile(&app).await;
    let (status, after) = update(&app, json!({"first_name": "  Sarah  "})).await;
    assert_eq!(status, 200, "{after}");
    assert_eq!(keys(&after), PROFILE_KEYS);
    assert_eq!(after["first_name"], "Sarah", "stored trimmed");
    let mut expected = before.clone();
    expected["first_name"] = json!("Sarah");
    assert_eq!(after, expected);
    assert_eq!(profile(&app).await, expected);
}

#[tokio::test]
async fn the_path_client_id_must_be_the_callers() {
    let app = spawn_app().await;
    for path in ["/api/v1/clients/1002", "/api/v1/clients/abc"] {
        let (status, body) = answer(
            app.put(path, Some(&app.primary(SARA)), &json!({"first_name": "X"}))
                .await,
        )
        .await;
        assert_eq!(
            (status, without_stack(body)),
            refused("client_id does not match the authenticated client"),
            "{path}"
        );
    }
}

#[tokio::test]
async fn a_body_client_id_must_be_the_callers_as_integer_or_numeric_string() {
    let app = spawn_app().await;
    assert_eq!(update(&app, json!({"client_id": 1001})).await.0, 200);
    assert_eq!(update(&app, json!({"client_id": "1001"})).await.0, 200);
    for bad in [json!(null), json!(1002), json!("x"), json!(true)] {
        assert_eq!(
            update(&app, json!({"client_id": bad})).await,
            refused("client_id does not match the authenticated client"),
            "{bad}"
        );
    }
}

#[tokio::test]
async fn contact_phone_may_only_repeat_the_stored_phone() {
    let app = spawn_app().await;
    assert_eq!(
        update(&app, json!({"contact_phone": " +966 500 000 001 "}))
            .await
            .0,
        200
    );
    for bad in [
        json!("966500000001"),
        json!("+966500000002"),
        json!(null),
        json!(966500000001_i64),
    ] {
        assert_eq!(
            update(&app, json!({"contact_phone": bad})).await,
            refused("contact_phone cannot be changed"),
            "{bad}"
        );
    }
    assert_eq!(profile(&app).await["contact_phone"], "+966500000001");
}

#[tokio::test]
async fn names_are_trimmed_at_most_100_characters_null_clears_empty_is_kept() {
    let app = spawn_app().await;
    for key in ["first_name", "last_name"] {
        let exactly_100 = format!("  {}  ", "ب".repeat(100));
        let (status, body) = update(&app, json!({key: exactly_100})).await;
        assert_eq!(status, 200);
        assert_eq!(body[key].as_str().unwrap().chars().count(), 100);
        let message = format!("{key} is invalid");
        assert_eq!(
            update(&app, json!({key: "x".repeat(101)})).await,
            refused(&message)
        );
        assert_eq!(update(&app, json!({key: 5})).await, refused(&message));
        assert_eq!(update(&app, json!({key: null})).await.1[key], Value::Null);
        assert_eq!(update(&app, json!({key: "   "})).await.1[key], "");
    }
}

#[tokio::test]
async fn email_has_no_format_check_but_must_be_text_or_null() {
    let app = spawn_app().await;
    assert_eq!(
        update(&app, json!({"email_address": "  not an email  "}))
            .await
            .1["email_address"],
        "not an email"
    );
    assert_eq!(
        update(&app, json!({"email_address": null})).await.1["email_address"],
        Value::Null
    );
    assert_eq!(
        update(&app, json!({"email_address": 42})).await,
        refused("email_address is invalid")
    );
}

#[tokio::test]
async fn birth_date_is_parsed_and_stored_as_the_utc_date() {
    let app = spawn_app().await;
    let cases = [
        (json!("2000-02-29"), json!("2000-02-29")),
        (json!("2000-03-01T01:00:00+03:00"), json!("2000-02-29")),
        (json!("March 1, 2000"), json!("2000-03-01")),
        (json!(null), Value::Null),
    ];
    for (sent, stored) in cases {
        let (status, body) = update(&app, json!({"birth_date": sent})).await;
        assert_eq!((status, &body["birth_date"]), (200, &stored), "{sent}");
    }
    for bad in [json!(""), json!("yesterday-ish"), json!(true)] {
        assert_eq!(
            update(&app, json!({"birth_date": bad})).await,
            refused("birth_date is invalid"),
            "{bad}"
        );
    }
}

#[tokio::test]
async fn sex_and_receive_offers_are_coerced_not_validated() {
    let app = spawn_app().await;
    for (sent, stored) in [
        (json!(1), 1),
        (json!(2), 2),
        (json!(9), 0),
        (json!(null), 0),
        (json!("x"), 0),
        (json!(0), 0),
    ] {
        assert_eq!(
            update(&app, json!({"sex": sent})).await.1["sex"],
            stored,
            "sex {sent}"
        );
    }
    for (sent, stored) in [
        (json!(1), 1),
        (json!("1"), 1),
        (json!(true), 1),
        (json!(0), 0),
        (json!("true"), 0),
        (json!(2), 0),
    ] {
        assert_eq!(
            update(&app, json!({"receive_offers": sent})).await.1["receive_offers"],
            stored,
            "receive_offers {sent}"
        );
    }
}

#[tokio::test]
async fn push_enabled_and_unknown_keys_are_ignored() {
    let app = spawn_app().await;
    let (status, body) = update(
        &app,
        json!({"push_enabled": 0, "status": "inactive", "odoo_id": "1", "whatever": 1}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            body["push_enabled"].clone(),
            body["status"].clone(),
            body["odoo_id"].clone()
        ),
        (json!(1), json!("active"), json!("5001"))
    );
}

#[tokio::test]
async fn the_first_failing_check_in_the_spec_order_wins_and_nothing_is_written() {
    let app = spawn_app().await;
    let before = profile(&app).await;
    let all_bad = json!({"client_id": 1, "contact_phone": "+1", "first_name": 1, "last_name": 1, "email_address": 1,
                         "birth_date": "", "sex": 1});
    // Remove the first failing key each time: the next rule in order answers.
    let order = [
        (
            "client_id",
            "client_id does not match the authenticated client",
        ),
        ("contact_phone", "contact_phone cannot be changed"),
        ("first_name", "first_name is invalid"),
        ("last_name", "last_name is invalid"),
        ("email_address", "email_address is invalid"),
        ("birth_date", "birth_date is invalid"),
    ];
    let mut body = all_bad;
    for (key, message) in order {
        assert_eq!(
            update(&app, body.clone()).await,
            refused(message),
            "with {key} first"
        );
        body.as_object_mut().unwrap().remove(key);
    }
    assert_eq!(
        profile(&app).await,
        before,
        "a refused update writes nothing, not even sex"
    );
    // The path is checked before the body.
    let (status, body) = answer(
        app.update_profile(OMAR, Some(&app.primary(SARA)), &json!({"first_name": 1}))
            .await,
    )
    .await;
    assert_eq!(
        (status, without_stack(body)),
        refused("client_id does not match the authenticated client")
    );
}

#[tokio::test]
async fn no_token_a_legacy_token_or_an_inactive_client_get_401_before_the_body() {
    let app = spawn_app().await;
    let unauthorized = (401, json!({"status": 401, "message": "Unauthorization"}));
    for token in [
        None,
        Some(SARA_LEGACY.to_owned()),
        Some(app.primary(CLOSED)),
        Some("Bearer-less".to_owned()),
    ] {
        let response = app
            .send(
                reqwest::Method::PUT,
                &paths::client(SARA),
                token.as_deref(),
                Some("{not json"),
            )
            .await;
        let (status, body) = answer(response).await;
        assert_eq!((status, without_stack(body)), unauthorized, "{token:?}");
    }
}

#[tokio::test]
async fn an_empty_or_non_object_body_changes_nothing_and_bad_json_is_400() {
    let app = spawn_app().await;
    let before = profile(&app).await;
    for body in [None, Some("[1,2]"), Some("null")] {
        let (status, after) = answer(
            app.send(
                reqwest::Method::PUT,
                &paths::client(SARA),
                Some(&app.primary(SARA)),
                body,
            )
            .await,
        )
        .await;
        assert_eq!((status, &after), (200, &before), "{body:?}");
    }
    let (status, body) = answer(
        app.send(
            reqwest::Method::PUT,
            &paths::client(SARA),
            Some(&app.primary(SARA)),
            Some("{oops"),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .starts_with("Invalid JSON body")
    );
}

#[tokio::test]
async fn errors_carry_a_stack_outside_production_only() {
    let development = spawn_app().await;
    let (_, body) = answer(
        development
            .update_profile(
                SARA,
                Some(&development.primary(SARA)),
                &json!({"first_name": 1}),
            )
            .await,
    )
    .await;
    assert_eq!(keys(&body), ["status", "message", "stack"]);

    let production = spawn_app_with(Options {
        app_env: AppEnv::Production,
        ..Options::default()
    })
    .await;
    let (_, body) = answer(
        production
            .update_profile(
                SARA,
                Some(&production.primary(SARA)),
                &json!({"first_name": 1}),
            )
            .await,
    )
    .await;
    assert_eq!(
        body,
        json!({"status": 400, "message": "first_name is invalid"})
    );
}

#[tokio::test]
async fn a_500_shows_the_raw_error_outside_production_and_hides_it_in_production() {
    for (app_env, raw_shown) in [(AppEnv::Development, true), (AppEnv::Production, false)] {
        let app = spawn_app_with(Options {
            app_env,
            ..Options::default()
        })
        .await;
        let token = app.primary(SARA);
        // Break the table under the running service.
        app.sql("ALTER TABLE clients ADD CONSTRAINT no_names CHECK (first_name <> 'Broken')")
            .await;
        let (status, body) = answer(
            app.update_profile(SARA, Some(&token), &json!({"first_name": "Broken"}))
                .await,
        )
        .await;
        assert_eq!(status, 500);
        if raw_shown {
            assert!(
                body["message"].as_str().unwrap().contains("no_names"),
                "{body}"
            );
            assert_eq!(keys(&body), ["status", "message", "stack"]);
        } else {
            assert_eq!(
                body,
                json!({"status": 500, "message": "Internal server error"})
            );
        }
    }
}
