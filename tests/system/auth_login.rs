//! The auth binary's login rules that only show on a real process: what a production start
//! does with `OTP_TEST_CODE`, and that an SMS failure's log lines never show the gateway's
//! URL (whose query may hold the provider's API key).

use diesel_async::SimpleAsyncConnection;
use e2e::{PRODUCTION_SECRETS, Service, demo_database, free_port, run};

/// A production environment with real secrets (the development ones are refused there)
/// and an SMS gateway nobody listens on (test-mode accounts never reach it).
fn production(gateway: &str) -> Vec<(&'static str, String)> {
    let mut env = vec![
        ("APP_ENV", "production".into()),
        ("SMS_PROVIDER", "http".into()),
        ("SMS_HTTP_URL", gateway.into()),
    ];
    env.extend(
        PRODUCTION_SECRETS
            .iter()
            .map(|(name, value)| (*name, (*value).to_owned())),
    );
    env
}

fn pairs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[tokio::test]
async fn a_production_start_refuses_the_development_test_code_with_a_clear_line() {
    let gateway = format!("http://127.0.0.1:{}/send", free_port());
    let mut env = production(&gateway);
    env.push(("OTP_TEST_CODE", "1234".into()));
    let output = run(
        "auth-service",
        &["serve"],
        "postgres://postgres@127.0.0.1:5432/unused",
        &pairs(&env),
    )
    .await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "auth-service: configuration error: OTP_TEST_CODE=1234 is the public development code \
             and is refused in production"
        ),
        "{stderr}"
    );
}

#[tokio::test]
async fn in_production_without_a_test_code_a_test_mode_account_cannot_log_in() {
    let database = demo_database(&["auth-service"], "auth_login_prod").await;
    let gateway = format!("http://127.0.0.1:{}/send", free_port());
    let auth = Service::start(
        "auth-service",
        database.url(),
        &pairs(&production(&gateway)),
    )
    .await;
    // Sara is in test mode (demo data): she is told a code is on its way, and none works.
    let phone = "contact_phone=%2B966500000001";
    let reset = auth
        .get(&format!("/api/v1/clients/reset-otp?{phone}"))
        .await;
    assert_eq!(reset.status(), 200);
    for code in ["1234", "0000"] {
        let verify = auth
            .get(&format!("/api/v1/clients/verify-otp?{phone}&code={code}"))
            .await;
        assert_eq!(verify.status(), 400, "{code}");
    }
}

#[tokio::test]
async fn an_sms_failure_logs_no_gateway_url_or_key() {
    let database = demo_database(&["auth-service"], "auth_login_sms_key").await;
    let mut conn = database.connect().await;
    conn.batch_execute("UPDATE clients SET test_mode = false WHERE client_id = 1002")
        .await
        .unwrap();
    const KEY: &str = "sk_live_9f8e7d6c5b4a";
    // Nobody listens there: the send fails with a connection error, the kind whose text
    // carries the URL.
    let gateway = format!("http://127.0.0.1:{}/send?api_key={KEY}", free_port());
    let auth = Service::start(
        "auth-service",
        database.url(),
        &[("SMS_PROVIDER", "http"), ("SMS_HTTP_URL", &gateway)],
    )
    .await;
    let reset = auth
        .get("/api/v1/clients/reset-otp?contact_phone=%2B966500000002")
        .await;
    assert_eq!(reset.status(), 502);
    let body = reset.text().await.unwrap();
    assert!(!body.contains(KEY), "{body}");
    // The failure is logged before the answer is written: its line is in the pipe, read
    // by the harness on its own time; then every line written until now.
    auth.log()
        .wait_for("login code not sent", |l| l.contains("login code not sent"))
        .await;
    let logs = auth.log().written().await.join("\n");
    assert!(logs.contains("login code not sent"), "{logs}");
    assert!(
        logs.contains("error sending request"),
        "the error's own text is kept: {logs}"
    );
    assert!(
        !logs.contains(KEY),
        "the gateway's key is in the log:\n{logs}"
    );
    assert!(
        !logs.contains("/send?"),
        "the gateway's URL is in the log:\n{logs}"
    );
}
