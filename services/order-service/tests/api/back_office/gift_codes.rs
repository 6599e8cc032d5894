//! Gift-code batches: issue, replay, list, codes and their states, CSV, withdrawal, expiry,
//! and what the app's gift-card route answers for each.

use std::collections::BTreeSet;

use back_office::access::{BackOfficeRefusal, ChangeRefusal};
use back_office::gift_codes::BatchRefusal;
use reqwest::Method;
use serde_json::{Value, json};

use super::{Credential, call, newest_change, refusal};
use crate::helpers::*;

/// Issues a batch; answers it (201).
pub async fn issue(app: &TestApp, body: Value) -> Value {
    let (status, batch) = call(Method::POST, "/gift-code-batches")
        .body(body)
        .send(app)
        .await;
    assert_eq!(status, 201, "{batch}");
    batch
}

/// The batch's codes as the CSV lists them (after its header).
pub async fn csv_codes(app: &TestApp, id: i64) -> Vec<String> {
    let response = call(Method::GET, &format!("/gift-code-batches/{id}/codes.csv"))
        .response(app)
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "text/csv; charset=utf-8"
    );
    let text = response.text().await.unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("code,points,expires_at"));
    lines
        .map(|line| line.split(',').next().unwrap().to_owned())
        .collect()
}

/// The batch with each code's state.
pub async fn codes(app: &TestApp, id: i64) -> Value {
    let (status, batch) = call(Method::GET, &format!("/gift-code-batches/{id}"))
        .send(app)
        .await;
    assert_eq!(status, 200, "{batch}");
    batch
}

fn state_of<'a>(batch: &'a Value, code: &str) -> &'a Value {
    batch["codes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["code"] == code)
        .unwrap_or_else(|| panic!("{code} is not in {batch}"))
}

#[tokio::test]
async fn the_token_then_the_operator_then_the_body_then_the_batch() {
    let app = spawn_app().await;
    let bad = json!({"count": 0});
    for (method, path) in [
        (Method::GET, "/gift-code-batches"),
        (Method::POST, "/gift-code-batches"),
        (Method::GET, "/gift-code-batches/999"),
        (Method::GET, "/gift-code-batches/999/codes.csv"),
        (Method::DELETE, "/gift-code-batches/999"),
        (Method::GET, "/catalog-audit"),
    ] {
        for credential in [Credential::Nothing, Credential::Raw("wrong")] {
            let mut no_token = call(method.clone(), path).body(bad.clone());
            no_token.credential = credential;
            no_token.operator = None;
            assert_eq!(
                no_token.send(&app).await,
                refusal(BackOfficeRefusal::Unauthenticated),
                "{method} {path}"
            );
        }
    }
    for (method, path) in [
        (Method::POST, "/gift-code-batches"),
        (Method::GET, "/gift-code-batches/999"),
        (Method::GET, "/gift-code-batches/999/codes.csv"),
        (Method::DELETE, "/gift-code-batches/999"),
    ] {
        for operator in [None, Some(("", "super_admin")), Some(("op-1", " "))] {
            let mut nobody = call(method.clone(), path).body(bad.clone());
            nobody.operator = operator;
            assert_eq!(
                nobody.send(&app).await,
                refusal(ChangeRefusal::NoOperator),
                "{method} {path}"
            );
        }
    }
    assert_eq!(
        call(Method::POST, "/gift-code-batches")
            .body(bad)
            .send(&app)
            .await,
        refusal(BatchRefusal::BadReference)
    );
    for id in ["999", "0", "-1", "abc", "1.0"] {
        for (method, path) in [
            (Method::GET, format!("/gift-code-batches/{id}")),
            (Method::GET, format!("/gift-code-batches/{id}/codes.csv")),
            (Method::DELETE, format!("/gift-code-batches/{id}")),
        ] {
            assert_eq!(
                call(method, &path).send(&app).await,
                (
                    404,
                    testkit::back_office_error(
                        404,
                        "BATCH_NOT_FOUND",
                        &format!("gift-code batch {id} does not exist")
                    )
                ),
                "{path}"
            );
        }
    }
}

#[tokio::test]
async fn every_body_refusal_in_its_words_and_nothing_issued() {
    let app = spawn_app().await;
    let ok = json!({"reference": "r-1", "count": 2, "points": "10"});
    let with = |key: &str, value: Value| {
        let mut body = ok.clone();
        body[key] = value;
        body
    };
    let cases = [
        (
            json!("x"),
            "NOT_AN_OBJECT",
            "the body must be a JSON object",
        ),
        (
            with("code", json!("A")),
            "UNKNOWN_FIELD",
            "code is not a field of a gift-code batch",
        ),
        (
            with("reference", json!(" ")),
            "INVALID_REFERENCE",
            "reference must be text of 1 to 200 visible characters",
        ),
        (
            with("count", json!(10_001)),
            "INVALID_COUNT",
            "count must be an integer from 1 to 10000",
        ),
        (
            with("points", json!(-5)),
            "INVALID_POINTS",
            "points must be a decimal above 0 and at most 1000000000, with at most 4 decimals",
        ),
        (
            with("prefix", json!("gift")),
            "INVALID_PREFIX",
            "prefix must be null or 1 to 12 capital letters and digits",
        ),
        (
            with("expiresAt", json!("2000-01-01T00:00:00Z")),
            "INVALID_EXPIRES_AT",
            "expiresAt must be null or a date-time with its offset (RFC 3339) in the future",
        ),
    ];
    for (body, code, message) in cases {
        assert_eq!(
            call(Method::POST, "/gift-code-batches")
                .body(body.clone())
                .send(&app)
                .await,
            (400, testkit::back_office_error(400, code, message)),
            "{body}"
        );
    }
    let (_, list) = call(Method::GET, "/gift-code-batches").send(&app).await;
    assert_eq!(
        list,
        json!({"data": [], "meta": {"totalItems": 0, "page": 1, "itemsPerPage": 10, "totalPages": 0}})
    );
}

#[tokio::test]
async fn a_batch_is_issued_listed_recorded_and_its_codes_redeemable_once() {
    let app = spawn_app().await;
    let batch = issue(
        &app,
        json!({"reference": "print-1", "count": 5, "points": 12.5, "prefix": "EID26",
               "expiresAt": "2099-01-01T00:00:00+03:00"}),
    )
    .await;
    let id = batch["id"].as_i64().unwrap();
    assert_eq!(
        testkit::keys(&batch),
        [
            "id",
            "reference",
            "count",
            "points",
            "prefix",
            "expiresAt",
            "createdBy",
            "createdAt",
            "codes"
        ]
    );
    assert_eq!(batch["points"], "12.5");
    assert_eq!(batch["expiresAt"], "2098-12-31T21:00:00Z");
    assert_eq!(batch["createdBy"], "op-9");
    assert_eq!(
        batch["codes"],
        json!({"unused": 5, "beingCredited": 0, "credited": 0, "withdrawn": 0, "expired": 0})
    );

    let change = newest_change(&app).await;
    assert_eq!(change["operatorId"], "op-9");
    assert_eq!(change["role"], "super_admin");
    assert_eq!(change["action"], "gift-code-batch.issue");
    assert_eq!(change["subject"], format!("gift-code-batch:{id}"));
    assert_eq!(change["before"], Value::Null);
    assert_eq!(change["after"], batch);

    let (status, list) = call(Method::GET, "/gift-code-batches").send(&app).await;
    assert_eq!(
        (status, list),
        (
            200,
            json!({"data": [batch.clone()],
                   "meta": {"totalItems": 1, "page": 1, "itemsPerPage": 10, "totalPages": 1}})
        )
    );

    let printed = csv_codes(&app, id).await;
    assert_eq!(printed.len(), 5);
    assert_eq!(printed.iter().collect::<BTreeSet<_>>().len(), 5);
    for code in &printed {
        let (prefix, random) = code.split_once('-').unwrap();
        assert_eq!(prefix, "EID26");
        let groups: Vec<&str> = random.split('-').collect();
        assert_eq!(groups.len(), 4, "{code}");
        assert!(
            groups.iter().all(|g| g.len() == 4
                && g.bytes()
                    .all(|b| back_office::gift_codes::ALPHABET.contains(&b))),
            "{code}"
        );
    }

    let code = &printed[0];
    let (status, redeemed) = app.redeem(1001, code).await;
    assert_eq!(
        (status, redeemed),
        (
            200,
            json!({"message": "The code was redeemed", "code": code, "points": "12.5"})
        )
    );
    assert_eq!(
        app.redeem(1002, code).await,
        error_c(409, "The code has already been used")
    );
    let listed = codes(&app, id).await;
    assert_eq!(listed["batch"]["codes"]["credited"], 1);
    assert_eq!(listed["batch"]["codes"]["unused"], 4);
    let credited = state_of(&listed, code);
    assert_eq!(credited["state"], "credited");
    assert_eq!(credited["clientId"], 1001);
    assert!(credited["creditedAt"].is_string(), "{credited}");
    assert!(credited["redeemedAt"].is_string(), "{credited}");
    assert_eq!(
        state_of(&listed, &printed[1]),
        &json!({"code": printed[1], "state": "unused", "clientId": null, "redeemedAt": null,
                "creditedAt": null})
    );
    // The CSV is for printing: a code redeemed is no longer in it.
    assert!(!csv_codes(&app, id).await.contains(code));
    let credits = app.credits.lock().unwrap().clone();
    assert_eq!(credits.len(), 1);
    assert_eq!(credits[0]["points"], "12.5");
}

#[tokio::test]
async fn a_reference_again_answers_the_first_batch_or_is_refused() {
    let app = spawn_app().await;
    let body = json!({"reference": "ticket-77", "count": 3, "points": "5"});
    let first = issue(&app, body.clone()).await;
    let (status, again) = call(Method::POST, "/gift-code-batches")
        .body(body)
        .send(&app)
        .await;
    assert_eq!((status, &again), (200, &first));
    // References that read the same are one (NFKC): full-width digits.
    let wide = json!({"reference": "ticket-７７", "count": 3, "points": "5"});
    let (status, again) = call(Method::POST, "/gift-code-batches")
        .body(wide)
        .send(&app)
        .await;
    assert_eq!((status, &again), (200, &first));
    for other in [
        json!({"reference": "ticket-77", "count": 4, "points": "5"}),
        json!({"reference": "ticket-77", "count": 3, "points": "5.5"}),
        json!({"reference": " ticket-77 ", "count": 3, "points": "5", "prefix": "A"}),
    ] {
        assert_eq!(
            call(Method::POST, "/gift-code-batches")
                .body(other)
                .send(&app)
                .await,
            (
                409,
                testkit::back_office_error(
                    409,
                    "REFERENCE_USED",
                    "reference ticket-77 was already used for another batch"
                )
            )
        );
    }
    let id = first["id"].as_i64().unwrap();
    assert_eq!(csv_codes(&app, id).await.len(), 3);
    let (_, list) = call(Method::GET, "/gift-code-batches").send(&app).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn the_order_service_refuses_a_role_the_operator_service_would_not_let_through() {
    let app = spawn_app().await;
    let body = json!({"reference": "r", "count": 1, "points": "1"});
    for role in ["admin", "data_entry", "SUPER_ADMIN"] {
        for (method, path) in [
            (Method::POST, "/gift-code-batches"),
            (Method::GET, "/gift-code-batches/1"),
            (Method::GET, "/gift-code-batches/1/codes.csv"),
            (Method::DELETE, "/gift-code-batches/1"),
        ] {
            let mut call = call(method.clone(), path).body(body.clone());
            call.operator = Some(("op-1", role));
            assert_eq!(
                call.send(&app).await,
                (
                    403,
                    testkit::back_office_error(
                        403,
                        "ROLE_REFUSED",
                        &format!("role {role} may not do this in the back office")
                    )
                ),
                "{method} {path} {role}"
            );
        }
    }
    let (_, list) = call(Method::GET, "/gift-code-batches").send(&app).await;
    assert_eq!(
        list,
        json!({"data": [], "meta": {"totalItems": 0, "page": 1, "itemsPerPage": 10, "totalPages": 0}})
    );
}

#[tokio::test]
async fn a_retry_is_the_same_batch_to_the_microsecond_and_after_its_expiry() {
    let app = spawn_app().await;
    let body = json!({"reference": "us", "count": 1, "points": "2",
                      "expiresAt": "2099-01-01T00:00:00.0000005Z"});
    let first = issue(&app, body.clone()).await;
    assert_eq!(first["expiresAt"], "2099-01-01T00:00:00Z");
    let (status, again) = call(Method::POST, "/gift-code-batches")
        .body(body)
        .send(&app)
        .await;
    assert_eq!((status, again), (200, first));
    // A batch whose expiry has passed since it was issued (made here as issuing made it).
    app.sql(
        "INSERT INTO gift_card_batches (reference, code_count, points, expires_at, created_by) \
         VALUES ('past', 1, 2, '2001-01-01T00:00:00Z', 'op-9')",
    )
    .await;
    let (status, retried) = call(Method::POST, "/gift-code-batches")
        .body(json!({"reference": "past", "count": 1, "points": "2",
                     "expiresAt": "2001-01-01T00:00:00Z"}))
        .send(&app)
        .await;
    assert_eq!(
        (status, &retried["reference"]),
        (200, &json!("past")),
        "{retried}"
    );
}

#[tokio::test]
async fn codes_are_answered_uncached_and_whoever_reads_them_is_in_the_trail() {
    let app = spawn_app().await;
    let batch = issue(
        &app,
        json!({"reference": "seen", "count": 1, "points": "1"}),
    )
    .await;
    let id = batch["id"].as_i64().unwrap();
    for (path, action) in [
        (format!("/gift-code-batches/{id}"), "gift-code-batch.read"),
        (
            format!("/gift-code-batches/{id}/codes.csv"),
            "gift-code-batch.export",
        ),
    ] {
        let response = call(Method::GET, &path).response(&app).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["cache-control"], "no-store", "{path}");
        let change = newest_change(&app).await;
        assert_eq!(
            (&change["action"], &change["operatorId"], &change["subject"]),
            (
                &json!(action),
                &json!("op-9"),
                &json!(format!("gift-code-batch:{id}"))
            )
        );
        assert_eq!(change["after"], batch);
    }
}

#[tokio::test]
async fn two_services_with_the_same_history_draw_different_codes() {
    // Two catalogs that issued the same batches in the same order: a generator seeded from
    // anything they share (the batch id, the count, the time to the second) would draw the
    // same codes in both.
    let (one, two) = tokio::join!(spawn_app(), spawn_app());
    let body = json!({"reference": "same", "count": 50, "points": "1"});
    let (a, b) = tokio::join!(issue(&one, body.clone()), issue(&two, body));
    assert_eq!(a["id"], b["id"]);
    let (a, b) = tokio::join!(
        csv_codes(&one, a["id"].as_i64().unwrap()),
        csv_codes(&two, b["id"].as_i64().unwrap())
    );
    let a: BTreeSet<String> = a.into_iter().collect();
    assert!(
        b.iter().all(|code| !a.contains(code)),
        "the two catalogs share codes"
    );
}

#[tokio::test]
async fn a_withdrawn_code_is_404_and_a_redeemed_one_keeps_its_state() {
    let app = spawn_app().await;
    let batch = issue(&app, json!({"reference": "w", "count": 3, "points": "7"})).await;
    let id = batch["id"].as_i64().unwrap();
    let printed = csv_codes(&app, id).await;
    assert_eq!(app.redeem(1001, &printed[0]).await.0, 200);
    // One redemption still being credited: the point service fails it.
    app.credits_fail
        .store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(app.redeem(1002, &printed[1]).await.0, 502);

    let (status, after) = call(Method::DELETE, &format!("/gift-code-batches/{id}"))
        .send(&app)
        .await;
    assert_eq!(status, 200, "{after}");
    assert_eq!(
        after["codes"],
        json!({"unused": 0, "beingCredited": 1, "credited": 1, "withdrawn": 1, "expired": 0})
    );
    let change = newest_change(&app).await;
    assert_eq!(change["action"], "gift-code-batch.withdraw");
    assert_eq!(change["before"]["codes"]["unused"], 1);
    assert_eq!(change["after"], after);

    assert_eq!(
        app.redeem(1003, &printed[2]).await,
        error_c(404, "The code not exist")
    );
    // The redemption being credited is its owner's still, and lands.
    app.credits_fail
        .store(false, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(app.redeem(1002, &printed[1]).await.0, 200);
    let listed = codes(&app, id).await;
    assert_eq!(state_of(&listed, &printed[0])["state"], "credited");
    assert_eq!(state_of(&listed, &printed[1])["state"], "credited");
    assert_eq!(state_of(&listed, &printed[2])["state"], "withdrawn");
    assert!(csv_codes(&app, id).await.is_empty());
    // Withdrawing again changes nothing, and records nothing.
    let trail = newest_change(&app).await;
    let (status, again) = call(Method::DELETE, &format!("/gift-code-batches/{id}"))
        .send(&app)
        .await;
    assert_eq!(status, 200);
    assert_eq!(again["codes"]["withdrawn"], 1);
    assert_eq!(newest_change(&app).await, trail);
}

#[tokio::test]
async fn an_expired_code_is_404_and_listed_expired() {
    let app = spawn_app().await;
    let batch = issue(
        &app,
        json!({"reference": "x", "count": 2, "points": "1", "expiresAt": "2099-01-01T00:00:00Z"}),
    )
    .await;
    let id = batch["id"].as_i64().unwrap();
    let printed = csv_codes(&app, id).await;
    assert_eq!(app.redeem(1001, &printed[0]).await.0, 200);
    app.sql(&format!(
        "UPDATE gift_card_codes SET expires_at = now() - interval '1 second' WHERE batch_id = {id}"
    ))
    .await;
    assert_eq!(
        app.redeem(1001, &printed[1]).await,
        error_c(404, "The code not exist")
    );
    let listed = codes(&app, id).await;
    assert_eq!(state_of(&listed, &printed[0])["state"], "credited");
    assert_eq!(state_of(&listed, &printed[1])["state"], "expired");
    assert_eq!(listed["batch"]["codes"]["expired"], 1);
    // The owner of a redemption made before the expiry is told it is used, not unknown.
    assert_eq!(
        app.redeem(1001, &printed[0]).await,
        error_c(409, "The code has already been used")
    );
}

#[tokio::test]
async fn a_batch_of_the_largest_count_has_distinct_codes() {
    let app = spawn_app().await;
    let batch = issue(
        &app,
        json!({"reference": "big", "count": 10_000, "points": "1"}),
    )
    .await;
    let printed = csv_codes(&app, batch["id"].as_i64().unwrap()).await;
    assert_eq!(printed.iter().collect::<BTreeSet<_>>().len(), 10_000);
    assert!(
        printed.iter().all(|code| code.len() == 19),
        "no prefix: 4 groups of 4 and 3 dashes"
    );
}

#[tokio::test]
async fn seeded_codes_stay_outside_every_batch() {
    let app = spawn_app().await;
    issue(&app, json!({"reference": "s", "count": 1, "points": "1"})).await;
    let (_, list) = call(Method::GET, "/gift-code-batches").send(&app).await;
    assert_eq!(list["data"][0]["count"], 1);
    assert_eq!(app.redeem(1001, "WELCOME-100").await.0, 200);
    assert_eq!(
        app.redeem(1001, "OLD-50").await,
        error_c(404, "The code not exist")
    );
}

#[tokio::test]
async fn the_batches_and_the_trail_come_a_page_at_a_time_newest_first() {
    let app = spawn_app().await;
    for n in 0..3 {
        issue(
            &app,
            json!({"reference": format!("p-{n}"), "count": 1, "points": "1"}),
        )
        .await;
    }
    let references = |page: &Value| -> Vec<String> {
        page["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["reference"].as_str().unwrap().to_owned())
            .collect()
    };
    let (_, first) = call(Method::GET, "/gift-code-batches?page=1&limit=2")
        .send(&app)
        .await;
    assert_eq!(references(&first), ["p-2", "p-1"]);
    assert_eq!(
        first["meta"],
        json!({"totalItems": 3, "page": 1, "itemsPerPage": 2, "totalPages": 2})
    );
    let (_, second) = call(Method::GET, "/gift-code-batches?page=2&limit=2")
        .send(&app)
        .await;
    assert_eq!(references(&second), ["p-0"]);
    let (_, trail) = call(Method::GET, "/catalog-audit?page=2&limit=1")
        .send(&app)
        .await;
    assert_eq!(
        trail["data"][0]["subject"],
        json!(format!(
            "gift-code-batch:{}",
            second["data"][0]["id"].as_i64().unwrap() + 1
        ))
    );
    assert_eq!(trail["meta"]["totalItems"], 3);
    // Unreadable or out of range: the defaults, never a refusal.
    let (status, odd) = call(Method::GET, "/gift-code-batches?page=x&limit=1000")
        .send(&app)
        .await;
    assert_eq!(
        (status, &odd["meta"]["page"], &odd["meta"]["itemsPerPage"]),
        (200, &json!(1), &json!(100))
    );
}
