//! reset-otp commits its code, gives its connection back and only then sends the SMS, so a
//! slow gateway never empties the pool; what happens when a send fails or is lost; and
//! test-mode accounts when no test code is configured.

use std::time::Duration;

use futures_util::future::join_all;
use server::AppEnv;

use crate::helpers::*;

async fn reset(app: &TestApp, phone: &str) -> (u16, serde_json::Value) {
    let query = format!("contact_phone={}", phone.replace('+', "%2B"));
    answer(app.reset_otp(&query).await).await
}

async fn verify(app: &TestApp, phone: &str, code: &str) -> u16 {
    let query = format!("contact_phone={}&code={code}", phone.replace('+', "%2B"));
    app.verify_otp(&query).await.status().as_u16()
}

/// Six real (not test-mode) accounts, 2001 to 2006.
fn phones() -> Vec<String> {
    (1..=6).map(|i| format!("+96651000000{i}")).collect()
}

async fn add_real_accounts(app: &TestApp) {
    app.sql(
        "INSERT INTO clients (client_id, odoo_id, contact_phone, first_name, test_mode) \
         SELECT 2000 + g, '1', '+96651000000' || g, 'Real', false FROM generate_series(1, 6) g",
    )
    .await;
}

#[tokio::test]
async fn slow_sms_sends_hold_no_connection_so_other_routes_still_answer() {
    let (handle, mut gate) = gate();
    let app = spawn_app_with(Options {
        gateway: Gateway::Gated(handle),
        pool_size: 2,
        ..Options::default()
    })
    .await;
    add_real_accounts(&app).await;
    let phones = phones();
    // Six sends held open by the gateway, against a pool of two connections.
    let resets = tokio::spawn({
        let reset_otp = app.url(&paths::reset_otp());
        let phones = phones.clone();
        async move {
            let client = reqwest::Client::new();
            join_all(phones.iter().map(|phone| {
                client
                    .get(format!(
                        "{reset_otp}?contact_phone={}",
                        phone.replace('+', "%2B")
                    ))
                    .send()
            }))
            .await
        }
    });
    // Every send reaches the gateway: none waits on a connection held by another. (Bounded,
    // so that the old code, which held one connection per send, fails instead of hanging.)
    tokio::time::timeout(Duration::from_secs(20), gate.held(phones.len()))
        .await
        .expect("the sends waited on the pool: a connection is held across the SMS send");
    // While all six wait on the gateway: the caller lookup, a token check and a login.
    let (status, body) = answer(app.users(Some(SARA_LEGACY)).await).await;
    assert_eq!(
        (status, body["data"]["client_id"].clone()),
        (200, SARA.into())
    );
    let (status, _) = answer(app.verify_token(Some(&app.primary(SARA))).await).await;
    assert_eq!(status, 200);
    assert_eq!(reset(&app, "+966500000001").await.0, 200);
    assert_eq!(verify(&app, "+966500000001", TEST_CODE).await, 200);

    gate.open();
    for response in resets.await.unwrap() {
        assert_eq!(response.unwrap().status(), 200);
    }
    for phone in &phones {
        assert_eq!(app.codes_sent_to(phone).len(), 1, "{phone}");
    }
    // Each send was confirmed: the codes are live for their 3 minutes.
    let mut conn = app.database.connect().await;
    use diesel_async::SimpleAsyncConnection;
    conn.batch_execute(
        "DO $$ BEGIN IF EXISTS (SELECT 1 FROM otp_codes WHERE sent_at IS NULL) \
         THEN RAISE 'unconfirmed'; END IF; END $$",
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_failed_send_lets_the_client_ask_again_at_once() {
    let app = spawn_app_with(Options {
        gateway: Gateway::Fails,
        ..Options::default()
    })
    .await;
    for _ in 0..3 {
        // Each try goes to the gateway again (no unsent code blocks it), and none counts
        // against the 5 SMS an hour.
        assert_eq!(reset(&app, "+966500000002").await.0, 502);
    }
    let mut conn = app.database.connect().await;
    use diesel_async::SimpleAsyncConnection;
    conn.batch_execute(
        "DO $$ BEGIN IF EXISTS (SELECT 1 FROM otp_codes) OR EXISTS (SELECT 1 FROM otp_events) \
         THEN RAISE 'kept'; END IF; END $$",
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_send_lost_between_commit_and_gateway_blocks_a_new_one_only_briefly() {
    let app = spawn_app().await;
    let omar = "+966500000002";
    assert_eq!(reset(&app, omar).await.0, 200);
    assert_eq!(app.codes_sent_to(omar).len(), 1);
    // A send in flight (stored, not confirmed yet): reset-otp sends nothing more.
    app.sql("UPDATE otp_codes SET sent_at = NULL, created_at = now()")
        .await;
    assert_eq!(reset(&app, omar).await.0, 200);
    assert_eq!(app.codes_sent_to(omar).len(), 1);
    // The process died after the commit: never confirmed, and past the longest a send can
    // take (the 2 s SMS timeout and a margin), the code no longer blocks a new send.
    app.sql("UPDATE otp_codes SET sent_at = NULL, created_at = now() - interval '1 minute'")
        .await;
    assert_eq!(reset(&app, omar).await.0, 200);
    let codes = app.codes_sent_to(omar);
    assert_eq!(codes.len(), 2);
    assert_eq!(verify(&app, omar, &codes[1]).await, 200);
}

#[tokio::test]
async fn without_a_test_code_a_test_mode_account_gets_no_code_and_cannot_log_in() {
    let app = spawn_app_with(Options {
        app_env: AppEnv::Production,
        test_code: None,
        ..Options::default()
    })
    .await;
    let sara = "+966500000001";
    assert_eq!(
        reset(&app, sara).await,
        (200, serde_json::json!({"status": true}))
    );
    assert!(app.codes_sent_to(sara).is_empty());
    for code in [TEST_CODE, "1234", "0000"] {
        assert_eq!(verify(&app, sara, code).await, 400, "{code}");
    }
    // Not even with a code stored while one was configured.
    let keys = auth_service::tokens::TokenKeys::new(SECRET.as_bytes());
    let hash = hex(&keys.code_hash(SARA, "1234"));
    app.sql(&format!(
        "INSERT INTO otp_codes (client_id, code_hash, expires_at, sent_at) \
         VALUES ({SARA}, '\\x{hash}', now() + interval '3 minutes', now())"
    ))
    .await;
    assert_eq!(verify(&app, sara, "1234").await, 400);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `otp_sms_sends_total{outcome}`: every outcome exported at zero from the start (so the
/// first failure after a start shows as an increase), then each send counted by outcome.
#[tokio::test]
async fn each_sms_send_is_counted_by_its_outcome() {
    testkit::metrics::alone_in_the_process();
    let failing = spawn_app_with(Options {
        gateway: Gateway::Fails,
        ..Options::default()
    })
    .await;
    let series = |outcome: &str| format!("otp_sms_sends_total{{outcome=\"{outcome}\"}}");
    let count = |text: &str, outcome: &str| {
        testkit::metrics::value(text, &series(outcome))
            .unwrap_or_else(|| panic!("{} is not exported:\n{text}", series(outcome)))
    };
    let before = testkit::metrics::scrape(&failing.client, &failing.base).await;
    for outcome in ["sent", "unreachable", "refused"] {
        assert_eq!(count(&before, outcome), 0.0, "{outcome} before any send");
    }
    assert_eq!(reset(&failing, "+966500000002").await.0, 502);
    let after = testkit::metrics::scrape(&failing.client, &failing.base).await;
    assert_eq!(count(&after, "refused") - count(&before, "refused"), 1.0);
    assert_eq!(count(&after, "sent"), count(&before, "sent"));
    assert_eq!(count(&after, "unreachable"), count(&before, "unreachable"));

    // The metrics registry is the process's: a second app reads the same counters.
    let accepting = spawn_app().await;
    add_real_accounts(&accepting).await;
    let before = testkit::metrics::scrape(&accepting.client, &accepting.base).await;
    assert_eq!(reset(&accepting, &phones()[0]).await.0, 200);
    let after = testkit::metrics::scrape(&accepting.client, &accepting.base).await;
    assert_eq!(count(&after, "sent") - count(&before, "sent"), 1.0);
    assert_eq!(count(&after, "refused"), count(&before, "refused"));
}
