//! The balance object, the history and the FAQ.

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn the_balance_is_bare_text_with_the_riyadh_expiry() {
    let app = spawn_app().await;
    let (status, body) = app
        .get(&paths::with_query(paths::balance(), "ignored=1"), SARA)
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        keys(&body),
        ["id", "user_id", "points", "pointsExpirationDate"]
    );
    // 500.5 + 250 - 50.25; the newest earn (22:30 UTC on 31 March) is 1 April in Riyadh.
    assert_eq!(
        body,
        json!({"id": "1001", "user_id": "1001", "points": "700.25", "pointsExpirationDate": "2027-04-01"})
    );
}

#[tokio::test]
async fn no_account_is_zero_and_no_date() {
    let app = spawn_app().await;
    assert_eq!(
        app.balance(NOURA).await.1,
        json!({"id": "1003", "user_id": "1003", "points": "0", "pointsExpirationDate": null})
    );
}

#[tokio::test]
async fn expiry_is_null_when_never_or_unset_and_negative_balances_show() {
    let app = spawn_app().await;
    app.sql("UPDATE point_settings SET expiry = 'never', inactivity_days = NULL")
        .await;
    assert_eq!(
        app.balance(SARA).await.1["pointsExpirationDate"],
        json!(null)
    );
    app.sql("DELETE FROM point_settings").await;
    assert_eq!(
        app.balance(SARA).await.1["pointsExpirationDate"],
        json!(null)
    );
    app.sql(
        "INSERT INTO point_accounts (client_id) VALUES (1003); \
         INSERT INTO point_entries (client_id, kind, points) VALUES (1003, 'adjustment', -12.345678); \
         UPDATE point_accounts SET balance = -12.345678 WHERE client_id = 1003",
    )
    .await;
    assert_eq!(app.balance_of(NOURA).await, "-12.3457");
}

#[tokio::test]
async fn history_is_newest_first_and_paged() {
    let app = spawn_app().await;
    let (status, body) = app.history("page=1&limit=2", SARA).await;
    assert_eq!(status, 200);
    assert_eq!(
        body["meta"],
        json!({"totalItems": 3, "page": 1, "itemsPerPage": 2, "totalPages": 2})
    );
    let kinds: Vec<(&str, &str)> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["kind"].as_str().unwrap(), e["points"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("spend", "-50.25"), ("earn", "250")]);
    let (_, page2) = app.history("page=2&limit=2", SARA).await;
    assert_eq!(page2["data"][0]["points"], "500.5");
    let (_, odd) = app.history("page=abc&limit=100000", SARA).await;
    assert_eq!(
        (
            odd["meta"]["page"].clone(),
            odd["meta"]["itemsPerPage"].clone()
        ),
        (json!(1), json!(100))
    );
    // A key sent twice is no 400 (it was `duplicate field`, found by `make fuzz-api`): the
    // first value counts, and an unreadable first one falls back like any other.
    let (status, twice) = app.history("page=2&page=1&limit=2&limit=50", SARA).await;
    assert_eq!(status, 200, "{twice}");
    assert_eq!(
        twice["meta"],
        json!({"totalItems": 3, "page": 2, "itemsPerPage": 2, "totalPages": 2})
    );
    let (status, null) = app.history("page=null&page=null", SARA).await;
    assert_eq!((status, &null["meta"]["page"]), (200, &json!(1)), "{null}");
}

#[tokio::test]
async fn the_faq_has_both_languages_in_order() {
    let app = spawn_app().await;
    let (status, body) = app.faq(SARA).await;
    assert_eq!(status, 200);
    assert_eq!(
        body[0],
        json!({"question_en": "Q1", "answer_en": "A1", "question_ar": "س١", "answer_ar": "ج١"})
    );
    assert_eq!(body.as_array().unwrap().len(), 2);
}
