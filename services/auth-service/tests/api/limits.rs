//! What a signed-in client can repeat is bounded: client lookups by phone (and what they
//! show), legacy tokens minted by exchange-token, saved addresses.

use auth_service::client_limits::ClientLimits;
use futures_util::future::join_all;
use serde_json::json;

use crate::helpers::*;

const OMAR_BY_PHONE: &str = "contact_phone=%2B966500000002";

fn limited(lookups_per_hour: i64, legacy_tokens_per_hour: i64) -> Options {
    Options {
        client_limits: ClientLimits {
            lookups_per_hour,
            legacy_tokens_per_hour,
        },
        pool_size: 8,
        ..Options::default()
    }
}

async fn count(app: &TestApp, sql: &str) -> i64 {
    app.database.count(sql).await
}

#[tokio::test]
async fn a_lookup_by_phone_answers_only_the_id_and_the_names_in_this_order() {
    let app = spawn_app().await;
    let response = app
        .find_client(OMAR_BY_PHONE, Some(&app.primary(SARA)))
        .await;
    assert_eq!(response.status(), 200);
    // The exact text: no email, birth date or settings, and the keys in this order.
    assert_eq!(
        response.text().await.unwrap(),
        r#"{"status":200,"data":{"client_id":1002,"first_name":"Omar","last_name":"Ali"}}"#
    );
}

#[tokio::test]
async fn a_burst_of_parallel_lookups_cannot_pass_the_callers_limit() {
    let app = spawn_app_with(limited(5, 20)).await;
    let token = app.primary(SARA);
    // Hits and misses alike: a scan for who is a client is mostly misses.
    let queries: Vec<String> = (0..24)
        .map(|i| match i % 2 {
            0 => OMAR_BY_PHONE.to_owned(),
            _ => format!("contact_phone=%2B9665111111{i:02}"),
        })
        .collect();
    let answers = join_all(
        queries
            .iter()
            .map(|q| async { answer(app.find_client(q, Some(&token)).await).await }),
    )
    .await;
    let passed = answers
        .iter()
        .filter(|(s, _)| *s == 200 || *s == 404)
        .count();
    let refused: Vec<_> = answers.iter().filter(|(s, _)| *s == 429).collect();
    assert_eq!((passed, refused.len()), (5, 19), "{answers:?}");
    assert_eq!(
        without_stack(refused[0].1.clone()),
        json!({"status": 429, "message": "Too many client lookups, try again later"})
    );
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM client_events").await,
        5
    );
    // The limit is the caller's own: another client still looks up.
    let (status, _) = answer(
        app.find_client(OMAR_BY_PHONE, Some(&app.primary(NOURA)))
            .await,
    )
    .await;
    assert_eq!(status, 200);
    // A request refused before the limit (no phone) counts nothing.
    let (status, _) = answer(app.find_client("", Some(&app.primary(NOURA))).await).await;
    assert_eq!(status, 400);
    assert_eq!(
        count(
            &app,
            &format!("SELECT count(*) AS n FROM client_events WHERE client_id = {NOURA}")
        )
        .await,
        1
    );
}

#[tokio::test]
async fn minting_legacy_tokens_is_limited_per_client_even_in_a_burst() {
    let app = spawn_app_with(limited(30, 3)).await;
    let primary = app.primary(SARA);
    let body = json!({"token": primary, "target_platform": "legacy"});
    let answers =
        join_all((0..12).map(|_| async { answer(app.exchange_token(&body).await).await })).await;
    let minted = answers.iter().filter(|(s, _)| *s == 200).count();
    let refused: Vec<_> = answers.iter().filter(|(s, _)| *s == 429).collect();
    assert_eq!((minted, refused.len()), (3, 9), "{answers:?}");
    assert_eq!(
        without_stack(refused[0].1.clone()),
        json!({"status": 429, "message": "Too many tokens requested, try again later"})
    );
    assert_eq!(
        count(
            &app,
            &format!(
                "SELECT count(*) AS n FROM legacy_tokens \
                 WHERE client_id = {SARA} AND source = 'exchange'"
            )
        )
        .await,
        3
    );
    // Trading for a primary token stores nothing and is not limited.
    let (status, _) = answer(
        app.exchange_token(&json!({"token": SARA_LEGACY, "target_platform": "primary"}))
            .await,
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn an_address_book_holds_at_most_50_addresses() {
    let app = spawn_app().await;
    app.sql(&format!(
        "INSERT INTO addresses (id, client_id, label, address_line, city, latitude, longitude) \
         SELECT lpad(to_hex(g), 24, '0'), {SARA}, 'Home', 'King Fahd Road', 'Riyadh', 24.7, 46.6 \
         FROM generate_series(1, 49) g"
    ))
    .await;
    let address = json!({"label": "Work", "address_line": "Olaya Street", "city": "Riyadh",
                         "latitude": 24.69, "longitude": 46.68});
    let (status, _) = answer(app.add_address(Some(&app.primary(SARA)), &address).await).await;
    assert_eq!(status, 201, "the 50th is kept");
    let (status, body) = answer(app.add_address(Some(&app.primary(SARA)), &address).await).await;
    assert_eq!(
        (status, without_stack(body)),
        (
            400,
            json!({"status": 400, "message": "address book is full: at most 50 addresses"})
        )
    );
    let (status, _) = answer(app.add_address(Some(&app.primary(NOURA)), &address).await).await;
    assert_eq!(status, 201, "another client's book is its own");
}
