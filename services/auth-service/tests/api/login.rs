//! Login by SMS code: reset-otp and verify-otp.

use auth_service::clock::{Clock, ManualClock};
use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::json;

use crate::helpers::*;

const SARA_PHONE: &str = "+966500000001";
const OMAR_PHONE: &str = "+966500000002";

async fn reset(app: &TestApp, phone: &str) -> (u16, serde_json::Value) {
    let query = format!("contact_phone={}", phone.replace('+', "%2B"));
    answer(app.reset_otp(&query).await).await
}

async fn verify(app: &TestApp, phone: &str, code: &str) -> (u16, serde_json::Value) {
    verify_with(app, phone, code, "").await
}

/// verify-otp with more of the query string after `contact_phone` and `code`.
async fn verify_with(
    app: &TestApp,
    phone: &str,
    code: &str,
    more: &str,
) -> (u16, serde_json::Value) {
    let query = format!(
        "contact_phone={}&code={code}{more}",
        phone.replace('+', "%2B")
    );
    answer(app.verify_otp(&query).await).await
}

#[tokio::test]
async fn login_end_to_end_from_code_to_both_tokens_and_back() {
    let app = spawn_app().await;
    assert_eq!(
        reset(&app, SARA_PHONE).await,
        (200, json!({"status": true}))
    );
    assert!(
        app.sms.lock().unwrap().is_empty(),
        "a test-mode account gets no SMS"
    );

    let (status, body) = verify(&app, SARA_PHONE, TEST_CODE).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(keys(&body), ["status", "data"]);
    assert_eq!(body["status"], 200);
    assert_eq!(keys(&body["data"]), ["access_token", "profile"]);
    assert_eq!(keys(&body["data"]["profile"]), PROFILE_KEYS);
    let primary = body["data"]["access_token"].as_str().unwrap().to_owned();

    let (status, profile) = answer(app.verify_token(Some(&primary)).await).await;
    assert_eq!(status, 200);
    assert_eq!(profile["client_id"], SARA);
    assert_eq!(keys(&profile), PROFILE_KEYS);

    let (status, exchanged) = answer(
        app.exchange_token(&json!({"token": primary, "target_platform": "legacy"}))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{exchanged}");
    assert_eq!(keys(&exchanged), ["status", "data"]);
    let legacy = exchanged["data"]["token"].as_str().unwrap().to_owned();
    assert_ne!(legacy, primary);

    let (status, user) = answer(app.users(Some(&legacy)).await).await;
    assert_eq!(status, 200);
    assert_eq!(user, json!({"status": 200, "data": profile}));

    let (status, back) = answer(
        app.exchange_token(&json!({"token": legacy, "target_platform": "primary"}))
            .await,
    )
    .await;
    assert_eq!(status, 200);
    let primary_again = back["data"]["token"].as_str().unwrap();
    assert_eq!(
        answer(app.verify_token(Some(primary_again)).await).await.1,
        profile
    );
}

#[tokio::test]
async fn a_real_account_gets_a_random_code_by_sms_once_while_it_lives() {
    let app = spawn_app().await;
    assert_eq!(
        reset(&app, OMAR_PHONE).await,
        (200, json!({"status": true}))
    );
    assert_eq!(
        reset(&app, OMAR_PHONE).await,
        (200, json!({"status": true}))
    );
    let codes = app.codes_sent_to(OMAR_PHONE);
    assert_eq!(
        codes.len(),
        1,
        "a second reset while the code lives sends nothing"
    );
    assert_eq!(codes[0].len(), 4);

    let (status, body) = verify(&app, OMAR_PHONE, &codes[0]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["profile"]["client_id"], OMAR);
    // A code logs in once.
    assert_eq!(verify(&app, OMAR_PHONE, &codes[0]).await.0, 400);
}

#[tokio::test]
async fn an_unknown_phone_gets_the_legacy_message() {
    let app = spawn_app().await;
    let (status, body) = reset(&app, "+966511111111").await;
    assert_eq!(
        (status, without_stack(body)),
        (
            400,
            json!({"status": 400, "message": "Last Name cannot be blank."})
        )
    );
}

/// `route` (`paths::reset_otp` or `paths::verify_otp`) with `query`, its `+` encoded, from `ip`.
async fn from(
    app: &TestApp,
    route: fn() -> String,
    query: &str,
    ip: &str,
) -> (u16, serde_json::Value) {
    let path = paths::with_query(route(), &query.replace('+', "%2B"));
    answer(app.get_from(&path, ip).await).await
}

async fn unknown_phone_events(app: &TestApp, ip: &str) -> i64 {
    use diesel::prelude::*;
    use diesel::sql_types::{BigInt, Text};
    use diesel_async::RunQueryDsl;
    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let mut conn = app.database.connect().await;
    diesel::sql_query(
        "SELECT count(*) AS n FROM otp_events WHERE kind = 'unknown_phone' AND ip = $1",
    )
    .bind::<Text, _>(ip)
    .get_result::<Count>(&mut conn)
    .await
    .unwrap()
    .n
}

#[tokio::test]
async fn a_burst_of_unknown_phones_from_one_address_stops_exactly_at_the_limit() {
    let mut options = Options::default();
    options.limits.unknown_phones_per_ip = 5;
    let app = spawn_app_with(options).await;
    let answers = futures_util::future::join_all((0..24).map(|i| {
        let query = format!("contact_phone=+9665111111{i:02}");
        let app = &app;
        async move { from(app, paths::reset_otp, &query, "10.0.0.1").await }
    }))
    .await;
    let unknown = json!({"status": 400, "message": "Last Name cannot be blank."});
    let limited = json!({"status": 429, "message": "Too many attempts, try again later"});
    let passed = answers
        .iter()
        .filter(|(s, b)| (*s, without_stack(b.clone())) == (400, unknown.clone()))
        .count();
    let refused = answers
        .iter()
        .filter(|(s, b)| (*s, without_stack(b.clone())) == (429, limited.clone()))
        .count();
    let statuses: Vec<u16> = answers.iter().map(|(s, _)| *s).collect();
    assert_eq!((passed, refused), (5, 19), "{statuses:?}");
    assert_eq!(unknown_phone_events(&app, "10.0.0.1").await, 5);

    // Past the limit the address gets the 429 for every phone, so the answers no longer
    // tell a client from a stranger: a known phone too, and on verify-otp.
    let (status, body) = from(
        &app,
        paths::reset_otp,
        &format!("contact_phone={OMAR_PHONE}"),
        "10.0.0.1",
    )
    .await;
    assert_eq!((status, without_stack(body)), (429, limited.clone()));
    let (status, body) = from(
        &app,
        paths::verify_otp,
        "contact_phone=+966511111199&code=1234",
        "10.0.0.1",
    )
    .await;
    assert_eq!((status, without_stack(body)), (429, limited.clone()));
    assert!(app.sms.lock().unwrap().is_empty());

    // Another address is unaffected: a known phone gets its code, an unknown one the spec's
    // message.
    let (status, body) = from(
        &app,
        paths::reset_otp,
        &format!("contact_phone={OMAR_PHONE}"),
        "10.0.0.2",
    )
    .await;
    assert_eq!((status, body), (200, json!({"status": true})));
    assert_eq!(app.sms.lock().unwrap().len(), 1);
    let (status, body) = from(
        &app,
        paths::reset_otp,
        "contact_phone=+966511111199",
        "10.0.0.2",
    )
    .await;
    assert_eq!((status, without_stack(body)), (400, unknown));
    assert_eq!(unknown_phone_events(&app, "10.0.0.1").await, 5);
}

#[tokio::test]
async fn unknown_phones_on_verify_otp_count_toward_the_same_limit() {
    let mut options = Options::default();
    options.limits.unknown_phones_per_ip = 3;
    let app = spawn_app_with(options).await;
    let wrong = json!({"status": 400, "message": "Invalid or expired code"});
    for i in 0..2 {
        let query = format!("contact_phone=+9665111111{i:02}&code=1234");
        let (status, body) = from(&app, paths::verify_otp, &query, "10.0.0.1").await;
        assert_eq!((status, without_stack(body)), (400, wrong.clone()));
    }
    let (status, _) = from(
        &app,
        paths::reset_otp,
        "contact_phone=+966511111102",
        "10.0.0.1",
    )
    .await;
    assert_eq!(status, 400);
    let (status, _) = from(
        &app,
        paths::verify_otp,
        "contact_phone=+966511111103&code=1234",
        "10.0.0.1",
    )
    .await;
    assert_eq!(status, 429);
    assert_eq!(unknown_phone_events(&app, "10.0.0.1").await, 3);
    // A known phone's wrong code from another address is still the plain 400.
    let (status, body) = from(
        &app,
        paths::verify_otp,
        &format!("contact_phone={SARA_PHONE}&code=0000"),
        "10.0.0.2",
    )
    .await;
    assert_eq!((status, without_stack(body)), (400, wrong));
}

#[tokio::test]
async fn a_plus_lost_in_the_query_string_still_finds_the_account() {
    let app = spawn_app().await;
    let (status, _) = answer(
        app.get(
            "/api/v1/clients/reset-otp?contact_phone=+966500000001",
            None,
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn the_sixth_wrong_try_is_refused_even_when_right_and_the_next_reset_sends_a_new_code() {
    let app = spawn_app().await;
    reset(&app, OMAR_PHONE).await;
    let code = app.codes_sent_to(OMAR_PHONE)[0].clone();
    let wrong = if code == "0000" { "1111" } else { "0000" };
    for _ in 0..5 {
        let (status, body) = verify(&app, OMAR_PHONE, wrong).await;
        assert_eq!(
            (status, without_stack(body)),
            (
                400,
                json!({"status": 400, "message": "Invalid or expired code"})
            )
        );
    }
    assert_eq!(
        verify(&app, OMAR_PHONE, &code).await.0,
        400,
        "the code is dead after five wrong tries"
    );

    reset(&app, OMAR_PHONE).await;
    let codes = app.codes_sent_to(OMAR_PHONE);
    assert_eq!(codes.len(), 2, "a dead code does not block a new one");
    assert_eq!(verify(&app, OMAR_PHONE, &codes[1]).await.0, 200);
}

#[tokio::test]
async fn an_expired_code_is_refused() {
    let app = spawn_app().await;
    reset(&app, SARA_PHONE).await;
    app.sql("UPDATE otp_codes SET expires_at = now() - interval '1 second'")
        .await;
    assert_eq!(verify(&app, SARA_PHONE, TEST_CODE).await.0, 400);
    // An expired code is no longer live, so reset-otp makes a new one.
    reset(&app, SARA_PHONE).await;
    assert_eq!(verify(&app, SARA_PHONE, TEST_CODE).await.0, 200);
}

#[derive(diesel::QueryableByName, Debug, PartialEq)]
struct CodeTimes {
    #[diesel(sql_type = diesel::sql_types::Timestamptz)]
    created_at: DateTime<Utc>,
    #[diesel(sql_type = diesel::sql_types::Timestamptz)]
    expires_at: DateTime<Utc>,
}

/// When the stored code of `client_id` was issued, and until when it lives.
async fn code_times(app: &TestApp, client_id: i64) -> CodeTimes {
    use diesel_async::RunQueryDsl;
    let mut conn = app.database.connect().await;
    diesel::sql_query("SELECT created_at, expires_at FROM otp_codes WHERE client_id = $1")
        .bind::<diesel::sql_types::BigInt, _>(client_id)
        .get_result(&mut conn)
        .await
        .unwrap()
}

/// A code lives 3 minutes by the codes' clock, here a manual one: stored to die exactly 3
/// minutes after it was issued, it is live at the last instant before (it verifies, and
/// reset-otp sends nothing), and from that instant on it is dead (it verifies no more, and
/// reset-otp sends a new one).
#[tokio::test]
async fn a_code_lives_exactly_three_minutes_by_the_clock() {
    let lifetime = Duration::minutes(3);
    // The database keeps microseconds: the last instant of a code's life is 1 µs before it
    // dies.
    let instant = Duration::microseconds(1);
    let issued = Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap();
    let clock = ManualClock::new(issued);
    let app = spawn_app_with(Options {
        otp_clock: Clock::Manual(clock.clone()),
        ..Options::default()
    })
    .await;

    assert_eq!(reset(&app, OMAR_PHONE).await.0, 200);
    assert_eq!(
        code_times(&app, OMAR).await,
        CodeTimes {
            created_at: issued,
            expires_at: issued + lifetime
        }
    );
    let first = app.codes_sent_to(OMAR_PHONE)[0].clone();
    clock.set(issued + lifetime - instant);
    assert_eq!(reset(&app, OMAR_PHONE).await.0, 200);
    assert_eq!(
        app.codes_sent_to(OMAR_PHONE).len(),
        1,
        "live at its last instant: no new SMS"
    );
    let (status, body) = verify(&app, OMAR_PHONE, &first).await;
    assert_eq!(status, 200, "live at its last instant: {body}");

    // Another code, tried at the instant it dies.
    let issued = issued + Duration::minutes(10);
    clock.set(issued);
    assert_eq!(reset(&app, OMAR_PHONE).await.0, 200);
    let second = app.codes_sent_to(OMAR_PHONE)[1].clone();
    clock.set(issued + lifetime);
    let (status, body) = verify(&app, OMAR_PHONE, &second).await;
    assert_eq!(
        (status, without_stack(body)),
        (
            400,
            json!({"status": 400, "message": "Invalid or expired code"})
        ),
        "dead 3 minutes after it was issued"
    );
    // Dead, it no longer holds back a new one.
    assert_eq!(reset(&app, OMAR_PHONE).await.0, 200);
    let codes = app.codes_sent_to(OMAR_PHONE);
    assert_eq!(codes.len(), 3, "a dead code does not block a new SMS");
    assert_eq!(verify(&app, OMAR_PHONE, &codes[2]).await.0, 200);
}

/// Everything the service keeps but the OTP events (each try adds one, whatever it carries),
/// as text.
async fn stored(app: &TestApp) -> String {
    #[derive(diesel::QueryableByName)]
    struct Stored {
        #[diesel(sql_type = diesel::sql_types::Text)]
        value: String,
    }
    use diesel_async::RunQueryDsl;
    let mut conn = app.database.connect().await;
    diesel::sql_query(
        "SELECT json_build_object(\
           'clients', (SELECT json_agg(c ORDER BY client_id) FROM clients c), \
           'legacy_tokens', (SELECT json_agg(t ORDER BY token_hash) FROM legacy_tokens t), \
           'client_events', (SELECT json_agg(e ORDER BY id) FROM client_events e), \
           'addresses', (SELECT json_agg(a ORDER BY id) FROM addresses a), \
           'otp_codes', (SELECT json_agg(o ORDER BY client_id) FROM otp_codes o))::text AS value",
    )
    .get_result::<Stored>(&mut conn)
    .await
    .unwrap()
    .value
}

/// A JWT's header and claims, but its `iat` (the second it was issued).
fn token_claims(token: &str) -> Vec<serde_json::Value> {
    use base64::Engine;
    token
        .split('.')
        .take(2)
        .map(|part| {
            let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(part)
                .unwrap();
            let mut json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            json.as_object_mut().unwrap().remove("iat");
            json
        })
        .collect()
}

/// verify-otp reads `contact_phone` and `code` only: `fcm_token` and `platform`, which the app
/// sends and the spec says are ignored, change nothing in the answer (token included) and
/// nothing stored, whatever their values. (Not a `%00`: a NUL anywhere in a request is
/// refused at the door, for every route alike, before any route reads its query:
/// docs/decisions.md.)
#[tokio::test]
async fn verify_otp_ignores_fcm_token_and_platform_whatever_their_values() {
    let app = spawn_app().await;
    assert_eq!(reset(&app, SARA_PHONE).await.0, 200);
    let (status, plain) = verify(&app, SARA_PHONE, TEST_CODE).await;
    assert_eq!(status, 200, "{plain}");
    let plain_token = plain["data"]["access_token"].as_str().unwrap().to_owned();
    let kept = stored(&app).await;
    let long = "x".repeat(4000);
    let odd_values = [
        "&fcm_token=dGVzdDpBUEE5MWJIX3Rva2Vu&platform=android".to_owned(),
        "&fcm_token=f00d&platform=ios".to_owned(),
        "&fcm_token=&platform=".to_owned(),
        "&platform=windows-phone&platform=android&fcm_token=a&fcm_token=b".to_owned(),
        "&fcm_token=%27%3B%20DROP%20TABLE%20clients%3B--&platform=%0A%09%5C".to_owned(),
        "&fcm_token=%F0%9F%98%80&platform=%D8%A3%D9%86%D8%AF%D8%B1%D9%88%D9%8A%D8%AF".to_owned(),
        "&fcm_token[]=a&platform[x]=1&fcm_token=%ZZ".to_owned(),
        format!("&fcm_token={long}&platform={long}"),
    ];
    for more in &odd_values {
        assert_eq!(reset(&app, SARA_PHONE).await.0, 200);
        let (status, body) = verify_with(&app, SARA_PHONE, TEST_CODE, more).await;
        assert_eq!(status, 200, "{more}: {body}");
        let token = body["data"]["access_token"].as_str().unwrap();
        assert_eq!(app.keys.verify_primary(token), Some(SARA), "{more}");
        assert_eq!(token_claims(token), token_claims(&plain_token), "{more}");
        let mut body = body.clone();
        body["data"]["access_token"] = plain["data"]["access_token"].clone();
        assert_eq!(body, plain, "{more}");
        assert_eq!(stored(&app).await, kept, "{more}");
    }
}

#[tokio::test]
async fn sms_sent_per_phone_are_limited_and_a_live_code_never_counts() {
    let mut options = Options::default();
    options.limits.sms_per_phone = 2;
    let app = spawn_app_with(options).await;
    for round in 0..2 {
        assert_eq!(reset(&app, OMAR_PHONE).await.0, 200);
        // While the code lives, asking again is free.
        assert_eq!(reset(&app, OMAR_PHONE).await.0, 200, "round {round}");
        app.sql("UPDATE otp_codes SET expires_at = now() - interval '1 second'")
            .await;
    }
    let (status, body) = reset(&app, OMAR_PHONE).await;
    assert_eq!(
        (status, without_stack(body)),
        (
            429,
            json!({"status": 429, "message": "Too many attempts, try again later"})
        )
    );
    assert_eq!(app.codes_sent_to(OMAR_PHONE).len(), 2);
}

#[tokio::test]
async fn sms_sent_per_client_address_are_limited() {
    let mut options = Options::default();
    options.limits.sms_per_ip = 1;
    let app = spawn_app_with(options).await;
    let app = &app;
    let from = |phone: &str, ip: &'static str| {
        let query = format!("contact_phone={}", phone.replace('+', "%2B"));
        async move {
            app.get_from(&paths::with_query(paths::reset_otp(), &query), ip)
                .await
        }
    };
    assert_eq!(from(OMAR_PHONE, "10.0.0.1").await.status(), 200);
    assert_eq!(from("+966500000003", "10.0.0.1").await.status(), 429);
    assert_eq!(from("+966500000003", "10.0.0.2").await.status(), 200);
}

#[tokio::test]
async fn codes_tried_per_phone_are_limited() {
    let mut options = Options::default();
    options.limits.tries_per_phone = 3;
    let app = spawn_app_with(options).await;
    reset(&app, SARA_PHONE).await;
    for _ in 0..3 {
        assert_eq!(verify(&app, SARA_PHONE, "0000").await.0, 400);
    }
    assert_eq!(
        verify(&app, SARA_PHONE, TEST_CODE).await.0,
        429,
        "the limit holds even for the right code"
    );
}

#[tokio::test]
async fn a_failing_gateway_gives_502_and_keeps_nothing() {
    let options = Options {
        gateway: Gateway::Fails,
        ..Options::default()
    };
    let app = spawn_app_with(options).await;
    let (status, body) = reset(&app, OMAR_PHONE).await;
    assert_eq!(
        (status, without_stack(body)),
        (
            502,
            json!({"status": 502, "message": "The code could not be sent, try again later"})
        )
    );
    let mut conn = app.database.connect().await;
    use diesel_async::SimpleAsyncConnection;
    // No live code is left behind, so the next try sends again instead of answering "sent".
    conn.batch_execute(
        "DO $$ BEGIN IF EXISTS (SELECT 1 FROM otp_codes) THEN RAISE 'code kept'; END IF; END $$",
    )
    .await
    .unwrap();
    conn.batch_execute(
        "DO $$ BEGIN IF EXISTS (SELECT 1 FROM otp_events) THEN RAISE 'send counted'; END IF; END $$",
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_gateway_that_hangs_past_the_timeout_gives_502() {
    let app = spawn_app_with(Options {
        gateway: Gateway::Hangs,
        ..Options::default()
    })
    .await;
    let started = std::time::Instant::now();
    let (status, _) = reset(&app, OMAR_PHONE).await;
    assert_eq!(status, 502);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "the SMS timeout was not applied"
    );
}

#[tokio::test]
async fn an_inactive_account_cannot_log_in() {
    let app = spawn_app().await;
    let (status, body) = reset(&app, "+966500000099").await;
    assert_eq!(
        (status, without_stack(body)),
        (401, json!({"status": 401, "message": "Unauthorization"}))
    );
    assert_eq!(verify(&app, "+966500000099", TEST_CODE).await.0, 401);
}

#[tokio::test]
async fn verify_needs_both_query_keys() {
    let app = spawn_app().await;
    let (status, body) = answer(app.verify_otp("contact_phone=%2B966500000001").await).await;
    assert_eq!(
        (status, without_stack(body)),
        (400, json!({"status": 400, "message": "code is required"}))
    );
    let (status, body) = answer(app.verify_otp("code=1234").await).await;
    assert_eq!(
        (status, without_stack(body)),
        (
            400,
            json!({"status": 400, "message": "contact_phone is required"})
        )
    );
}
