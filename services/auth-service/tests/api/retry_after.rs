//! Every 429 says when to come back: `Retry-After`, the whole seconds (rounded up) until the
//! limit that refused the request would let it through, from the same rows that decided the
//! refusal. The test ages the counted rows to known ages by the database's clock, the one
//! the limits' windows use; the only slack in the expected value is the time the test
//! itself took between aging them and the answer, which it measures.

use std::time::Instant;

use auth_service::client_limits::ClientLimits;
use serde_json::json;

use crate::helpers::*;

const SARA_PHONE: &str = "+966500000001";
const OMAR_PHONE: &str = "+966500000002";

/// The header of a 429, and its body without `stack`.
async fn refused(response: reqwest::Response) -> (u64, serde_json::Value) {
    let wait = testkit::retry_after(&response);
    (wait, without_stack(response.json().await.unwrap()))
}

/// `route` (`paths::reset_otp` or `paths::verify_otp`) with `query`, its `+` encoded, from `ip`.
async fn otp(app: &TestApp, route: fn() -> String, query: &str, ip: &str) -> reqwest::Response {
    app.get_from(&paths::with_query(route(), &query.replace('+', "%2B")), ip)
        .await
}

fn limited(lookups_per_hour: i64, legacy_tokens_per_hour: i64) -> Options {
    Options {
        client_limits: ClientLimits {
            lookups_per_hour,
            legacy_tokens_per_hour,
        },
        ..Options::default()
    }
}

#[tokio::test]
async fn a_refused_lookup_says_when_the_oldest_counted_one_leaves_the_hour() {
    let app = spawn_app_with(limited(2, 20)).await;
    let token = app.primary(SARA);
    let lookup = || app.find_client("contact_phone=%2B966500000002", Some(&token));
    for _ in 0..2 {
        assert_eq!(lookup().await.status(), 200);
    }
    // The older of the two counted 20 minutes ago: the third passes in 40 minutes.
    let aged = Instant::now();
    app.sql(
        "UPDATE client_events SET created_at = now() - interval '20 minutes' \
         WHERE id = (SELECT min(id) FROM client_events); \
         UPDATE client_events SET created_at = now() - interval '5 minutes' \
         WHERE id = (SELECT max(id) FROM client_events)",
    )
    .await;
    let (wait, body) = refused(lookup().await).await;
    assert_eq!(
        body,
        json!({"status": 429, "message": "Too many client lookups, try again later"})
    );
    testkit::assert_wait(wait, 40 * 60, aged);
}

#[tokio::test]
async fn a_refused_legacy_token_says_when_the_limit_lets_the_next_one_through() {
    let app = spawn_app_with(limited(30, 1)).await;
    let body = json!({"token": app.primary(SARA), "target_platform": "legacy"});
    let exchange = || app.exchange_token(&body);
    assert_eq!(exchange().await.status(), 200);
    let aged = Instant::now();
    app.sql("UPDATE client_events SET created_at = now() - interval '59 minutes 30 seconds'")
        .await;
    let (wait, body) = refused(exchange().await).await;
    assert_eq!(
        body,
        json!({"status": 429, "message": "Too many tokens requested, try again later"})
    );
    testkit::assert_wait(wait, 30, aged);
}

#[tokio::test]
async fn a_refused_sms_says_when_the_phones_limit_lets_the_next_one_through() {
    let mut options = Options::default();
    options.limits.sms_per_phone = 2;
    let app = spawn_app_with(options).await;
    for _ in 0..2 {
        assert_eq!(
            otp(
                &app,
                paths::reset_otp,
                &format!("contact_phone={OMAR_PHONE}"),
                "10.0.0.1"
            )
            .await
            .status(),
            200
        );
        app.sql("UPDATE otp_codes SET expires_at = now() - interval '1 second'")
            .await;
    }
    // Sent 50 and 30 minutes ago: the limit's 2nd newest is the 50-minute one.
    let aged = Instant::now();
    app.sql(
        "UPDATE otp_events SET created_at = now() - interval '50 minutes' \
         WHERE id = (SELECT min(id) FROM otp_events WHERE kind = 'sms_sent'); \
         UPDATE otp_events SET created_at = now() - interval '30 minutes' \
         WHERE id = (SELECT max(id) FROM otp_events WHERE kind = 'sms_sent')",
    )
    .await;
    let (wait, body) = refused(
        otp(
            &app,
            paths::reset_otp,
            &format!("contact_phone={OMAR_PHONE}"),
            "10.0.0.1",
        )
        .await,
    )
    .await;
    assert_eq!(
        body,
        json!({"status": 429, "message": "Too many attempts, try again later"})
    );
    testkit::assert_wait(wait, 10 * 60, aged);
}

#[tokio::test]
async fn a_refused_code_try_waits_for_the_later_of_the_phones_and_the_addresss_limits() {
    let mut options = Options::default();
    options.limits.tries_per_phone = 2;
    options.limits.tries_per_ip = 1;
    let app = spawn_app_with(options).await;
    assert_eq!(
        otp(
            &app,
            paths::reset_otp,
            &format!("contact_phone={SARA_PHONE}"),
            "10.0.0.1"
        )
        .await
        .status(),
        200
    );
    let wrong = format!("contact_phone={SARA_PHONE}&code=0000");
    assert_eq!(
        otp(&app, paths::verify_otp, &wrong, "10.0.0.1")
            .await
            .status(),
        400
    );
    assert_eq!(
        otp(&app, paths::verify_otp, &wrong, "10.0.0.2")
            .await
            .status(),
        400
    );
    // The phone (limit 2) tried 40 and 10 minutes ago, address 10.0.0.2 (limit 1) 10
    // minutes ago: from that address both are at their limit; the phone's frees in 20
    // minutes, the address's in 50, and the request passes only once both have.
    let aged = Instant::now();
    app.sql(
        "UPDATE otp_events SET created_at = now() - interval '40 minutes' \
         WHERE kind = 'code_tried' AND ip = '10.0.0.1'; \
         UPDATE otp_events SET created_at = now() - interval '10 minutes' \
         WHERE kind = 'code_tried' AND ip = '10.0.0.2'",
    )
    .await;
    let (wait, _) = refused(otp(&app, paths::verify_otp, &wrong, "10.0.0.2").await).await;
    testkit::assert_wait(wait, 50 * 60, aged);
}

#[tokio::test]
async fn an_address_past_its_unknown_phones_hears_when_it_may_ask_again_on_both_routes() {
    let mut options = Options::default();
    options.limits.unknown_phones_per_ip = 2;
    let app = spawn_app_with(options).await;
    for i in 0..2 {
        let query = format!("contact_phone=+9665111111{i:02}");
        assert_eq!(
            otp(&app, paths::reset_otp, &query, "10.0.0.1")
                .await
                .status(),
            400
        );
    }
    let aged = Instant::now();
    app.sql(
        "UPDATE otp_events SET created_at = now() - interval '45 minutes' \
         WHERE id = (SELECT min(id) FROM otp_events WHERE kind = 'unknown_phone'); \
         UPDATE otp_events SET created_at = now() - interval '1 minute' \
         WHERE id = (SELECT max(id) FROM otp_events WHERE kind = 'unknown_phone')",
    )
    .await;
    // Another unknown phone, a known one, and verify-otp: the same wait.
    for (route, query) in [
        (
            paths::reset_otp as fn() -> String,
            "contact_phone=+966511111199".to_owned(),
        ),
        (paths::reset_otp, format!("contact_phone={OMAR_PHONE}")),
        (
            paths::verify_otp,
            "contact_phone=+966511111199&code=1234".to_owned(),
        ),
    ] {
        let (wait, body) = refused(otp(&app, route, &query, "10.0.0.1").await).await;
        assert_eq!(
            body,
            json!({"status": 429, "message": "Too many attempts, try again later"})
        );
        testkit::assert_wait(wait, 15 * 60, aged);
    }
}
