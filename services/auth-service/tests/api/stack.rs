//! Envelope A's `stack` (outside production) says where the error was made: the file and
//! line of this service's source that made it, a `?` included. Production answers carry no
//! `stack` at all. The expected lines are looked up in the source, so that editing the file
//! moves them with the code.

use serde_json::json;
use server::AppEnv;

use crate::helpers::*;

/// The query of a route that takes a primary token (the lookup by phone).
const LOOKUP: &str = "contact_phone=%2B966500000002";

/// `services/auth-service/src/<file>:<line>`, the line where `code` (found once in `file`,
/// possibly over several lines) starts.
fn made_at(file: &str, code: &str) -> String {
    let path = format!("{}/src/{file}", env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(&path).unwrap();
    let starts: Vec<usize> = source.match_indices(code).map(|(at, _)| at).collect();
    assert_eq!(starts.len(), 1, "`{code}` once in {path}");
    let line = source[..starts[0]].matches('\n').count() + 1;
    format!("services/auth-service/src/{file}:{line}")
}

/// The `stack` of an envelope A answer, after checking the body's keys and their order.
async fn stack_of(response: reqwest::Response, status: u16) -> String {
    let (got, body) = answer(response).await;
    assert_eq!(got, status, "{body}");
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["status", "message", "stack"], "{body}");
    body["stack"].as_str().unwrap().to_owned()
}

/// The stack's first line is the place itself: `at <file>:<line>:<column>`.
fn assert_made_at(stack: &str, place: &str) {
    let first = stack.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("at {place}:")),
        "stack should start at {place}, got:\n{stack}"
    );
}

#[tokio::test]
async fn a_refusal_by_question_mark_points_to_the_line_of_the_question_mark() {
    let app = spawn_app().await;
    // No token: the caller extractor's `ok_or(..)?`.
    let stack = stack_of(app.find_client(LOOKUP, None).await, 401).await;
    assert_made_at(
        &stack,
        &made_at("caller.rs", "let token = token(req).ok_or("),
    );
}

#[tokio::test]
async fn an_error_returned_by_a_handler_points_to_its_line() {
    let app = spawn_app().await;
    let response = app
        .find_client("contact_phone=", Some(&app.primary(SARA)))
        .await;
    let stack = stack_of(response, 400).await;
    assert_made_at(
        &stack,
        &made_at(
            "handlers/tokens.rs",
            "let phone = required_phone(query.contact_phone.as_deref())?;",
        ),
    );
    // The backtrace's own frames follow, the handler's among them; no framework frames.
    assert!(stack.contains("handlers/tokens.rs:"), "{stack}");
    assert!(!stack.contains(".cargo/registry"), "{stack}");
}

#[tokio::test]
async fn a_database_failure_points_to_the_query_that_failed() {
    let app = spawn_app().await;
    let token = app.primary(SARA);
    // Break the table under the running service.
    app.sql("ALTER TABLE clients ADD CONSTRAINT no_names CHECK (first_name <> 'Broken')")
        .await;
    let response = app
        .update_profile(SARA, Some(&token), &json!({"first_name": "Broken"}))
        .await;
    let stack = stack_of(response, 500).await;
    assert_made_at(
        &stack,
        &made_at(
            "handlers/profile.rs",
            // A `?` at the end of a chain is reported where the chain starts.
            "let profile = diesel::update(clients::table.find(caller.client_id))\n        .set((&changes,",
        ),
    );
}

#[tokio::test]
async fn production_answers_carry_no_stack() {
    let app = spawn_app_with(Options {
        app_env: AppEnv::Production,
        ..Options::default()
    })
    .await;
    let response = app.find_client(LOOKUP, None).await;
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.text().await.unwrap(),
        r#"{"status":401,"message":"Unauthorization"}"#
    );
    let response = app
        .find_client("contact_phone=", Some(&app.primary(SARA)))
        .await;
    assert_eq!(response.status(), 400);
    assert_eq!(
        response.text().await.unwrap(),
        r#"{"status":400,"message":"contact_phone is required"}"#
    );
}
