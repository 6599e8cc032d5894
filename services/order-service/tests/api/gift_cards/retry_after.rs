//! The wrong-code 429 says when to come back: `Retry-After`, the whole seconds (rounded up)
//! until the limit that refused the request would let it through, from the same rows that
//! decided the refusal; with both limits reached, the later of the two. The test ages the
//! counted tries to known ages by the database's clock, the one the limits' window uses; the
//! only slack in the expected value is the time the test itself took between aging them and
//! the answer, which it measures.

use std::time::Instant;

use serde_json::json;
use server::testing::openapi;

use crate::helpers::*;

/// A wrong code from `client` at address `ip`.
async fn guess(app: &TestApp, client: i64, ip: &str) -> reqwest::Response {
    app.client
        .post(app.url(&paths::gift_card_code()))
        .bearer_auth(token(client))
        .header("x-forwarded-for", ip)
        .json(&json!({"code": "NOT-A-CODE"}))
        .send()
        .await
        .unwrap()
}

/// The header of a 429, after checking its body is the unchanged envelope C.
async fn refused(response: reqwest::Response) -> u64 {
    let wait = testkit::retry_after(&response);
    assert_eq!(
        response.text().await.unwrap(),
        r#"{"message":"Too many attempts, try again later","statusCode":429}"#
    );
    wait
}

#[tokio::test]
async fn a_client_at_its_limit_hears_when_its_oldest_counted_try_leaves_the_hour() {
    let app = spawn_app_with(Options {
        tries_per_client: 2,
        tries_per_ip: 1000,
        ..Options::default()
    })
    .await;
    for _ in 0..2 {
        assert_eq!(guess(&app, 1001, "10.0.0.1").await.status(), 404);
    }
    // Tried 20 and 5 minutes ago: the third passes when the 20-minute one leaves, in 40.
    let aged = Instant::now();
    app.sql(
        "UPDATE gift_card_tries SET created_at = now() - interval '20 minutes' \
         WHERE id = (SELECT min(id) FROM gift_card_tries); \
         UPDATE gift_card_tries SET created_at = now() - interval '5 minutes' \
         WHERE id = (SELECT max(id) FROM gift_card_tries)",
    )
    .await;
    let wait = refused(guess(&app, 1001, "10.0.0.1").await).await;
    testkit::assert_wait(wait, 40 * 60, aged);
}

#[tokio::test]
async fn with_both_limits_reached_the_wait_is_the_later_of_the_two() {
    let app = spawn_app_with(Options {
        tries_per_client: 2,
        tries_per_ip: 1,
        ..Options::default()
    })
    .await;
    assert_eq!(guess(&app, 1001, "10.0.0.1").await.status(), 404);
    assert_eq!(guess(&app, 1001, "10.0.0.2").await.status(), 404);
    // The client (limit 2) tried 40 and 10 minutes ago, address 10.0.0.2 (limit 1) 10
    // minutes ago: the client's limit frees in 20 minutes, the address's in 50.
    let aged = Instant::now();
    app.sql(
        "UPDATE gift_card_tries SET created_at = now() - interval '40 minutes' \
         WHERE ip = '10.0.0.1'; \
         UPDATE gift_card_tries SET created_at = now() - interval '10 minutes' \
         WHERE ip = '10.0.0.2'",
    )
    .await;
    // From 10.0.0.2 both hold the request: it passes once both have freed.
    let wait = refused(guess(&app, 1001, "10.0.0.2").await).await;
    testkit::assert_wait(wait, 50 * 60, aged);
    // From another address only the client's limit does.
    let wait = refused(guess(&app, 1001, "10.0.0.3").await).await;
    testkit::assert_wait(wait, 20 * 60, aged);
    // And another client at 10.0.0.2 meets only the address's.
    let wait = refused(guess(&app, 1002, "10.0.0.2").await).await;
    testkit::assert_wait(wait, 50 * 60, aged);
}

#[tokio::test]
async fn the_document_names_the_header_on_the_429() {
    let app = spawn_app().await;
    let doc = openapi::document(&app.client, &app.base).await;
    let header = &doc["paths"]["/api/v2/client/gift-card-code"]["post"]["responses"]["429"]["headers"]
        ["Retry-After"];
    assert_eq!(header["schema"]["type"], "integer", "{header}");
    assert!(
        header["description"]
            .as_str()
            .is_some_and(|d| d.starts_with("Whole seconds until the limit")),
        "{header}"
    );
}
