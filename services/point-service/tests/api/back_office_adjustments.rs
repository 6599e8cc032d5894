//! Support's adjustments through `/internal/v1/back-office/clients/{id}/adjustments`: the
//! check order, each refusal's message, a credit and a debit in the client's history as
//! their own kind, a replay answering the first, a debit never below zero, the audit row,
//! the ledger audit and the liability report counting them, and adjustments racing point
//! orders of the same client.

use futures_util::future::join_all;
use point_service::reports::audit;
use point_service::reports::liability::{self, Period};
use serde_json::{Value, json};

use crate::back_office::{Credential, call, operator_refusal};
use crate::helpers::*;

fn adjustments(client: impl std::fmt::Display) -> String {
    format!("/clients/{client}/adjustments")
}

async fn adjust(app: &TestApp, client: i64, body: Value) -> (u16, Value) {
    call(reqwest::Method::POST, &adjustments(client))
        .by_role("super_admin")
        .body(body)
        .send(app)
        .await
}

#[tokio::test]
async fn a_credit_and_a_debit_are_in_the_history_the_audit_and_the_liability_report() {
    let app = spawn_app().await;
    let before = app.balance_of(SARA).await;
    let (status, credit) = adjust(
        &app,
        SARA,
        json!({"points": "12.345", "reason": "late refund, ticket 7", "reference": "t-7"}),
    )
    .await;
    assert_eq!(status, 201, "{credit}");
    let keys: Vec<&str> = credit
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "reference",
            "clientId",
            "points",
            "reason",
            "operatorId",
            "role",
            "balanceAfter",
            "createdAt"
        ]
    );
    assert_eq!(
        (
            &credit["reference"],
            &credit["clientId"],
            &credit["points"],
            &credit["operatorId"]
        ),
        (
            &json!("t-7"),
            &json!(SARA),
            &json!("12.345"),
            &json!("op-7")
        )
    );
    let after_credit = app.balance_of(SARA).await;
    assert_eq!(credit["balanceAfter"], json!(after_credit));
    assert_ne!(after_credit, before);

    let (status, debit) = adjust(
        &app,
        SARA,
        json!({"points": -2.345, "reason": "mistaken credit", "reference": "t-8"}),
    )
    .await;
    assert_eq!(status, 201, "{debit}");
    assert_eq!(debit["points"], json!("-2.345"));

    let (_, history) = app.history("", SARA).await;
    let newest: Vec<(&Value, &Value)> = history["data"]
        .as_array()
        .unwrap()
        .iter()
        .take(2)
        .map(|e| (&e["kind"], &e["points"]))
        .collect();
    assert_eq!(
        newest,
        [
            (&json!("support_adjustment"), &json!("-2.345")),
            (&json!("support_adjustment"), &json!("12.345"))
        ]
    );

    let (_, trail) = call(reqwest::Method::GET, "/audit").send(&app).await;
    assert_eq!(
        (&trail["data"][0]["action"], &trail["data"][0]["subject"]),
        (&json!("adjustment.debit"), &json!(format!("client:{SARA}")))
    );
    assert_eq!(trail["data"][1]["action"], json!("adjustment.credit"));
    assert_eq!(trail["data"][1]["before"], json!({"balance": before}));

    let mut conn = app.database.connect().await;
    audit::run(&mut conn).await.unwrap();
    let report = liability::report(&mut conn, Period::default())
        .await
        .unwrap();
    assert_eq!(report.support_adjusted.to_string(), "10.000");
    assert!(
        report
            .lines()
            .contains(&"adjusted\tsupport_adjustment\t10".to_owned())
    );
}

#[tokio::test]
async fn each_refusal_in_its_order_and_nothing_moved() {
    let app = spawn_app().await;
    let good = json!({"points": "-1", "reason": "x", "reference": "r-1"});
    let bad_body = [
        (json!([]), "NOT_AN_OBJECT", "the body must be a JSON object"),
        (
            json!({"points": 1, "note": "x"}),
            "UNKNOWN_FIELD",
            "note is not a field of an adjustment",
        ),
        (
            json!({"points": "0", "reason": "x", "reference": "r"}),
            "INVALID_POINTS",
            "points must be a decimal other than 0 from -1000000000 to 1000000000, with at most 4 \
             decimals: positive credits the client, negative debits",
        ),
        (
            json!({"points": 1, "reason": "", "reference": "r"}),
            "INVALID_REASON",
            "reason must be text of 1 to 500 visible characters",
        ),
        (
            json!({"points": 1, "reason": "x", "reference": "r".repeat(201)}),
            "INVALID_REFERENCE",
            "reference must be text of 1 to 200 visible characters",
        ),
    ];
    for (body, code, message) in bad_body {
        assert_eq!(
            adjust(&app, SARA, body.clone()).await,
            (400, operator_refusal(400, code, message)),
            "{body}"
        );
    }
    // The body before the client; the client before the balance.
    assert_eq!(adjust(&app, GHOST, json!({})).await.0, 400);
    for client in [GHOST.to_string(), "0".to_owned(), "abc".to_owned()] {
        assert_eq!(
            call(reqwest::Method::POST, &adjustments(&client))
                .by_role("super_admin")
                .body(good.clone())
                .send(&app)
                .await,
            (
                404,
                operator_refusal(
                    404,
                    "CLIENT_NOT_FOUND",
                    &format!("client {client} not found")
                )
            )
        );
    }
    let balance = app.balance_of(NOURA).await;
    let over = balance.parse::<bigdecimal::BigDecimal>().unwrap()
        + bigdecimal::BigDecimal::new(1.into(), 4);
    assert_eq!(
        adjust(
            &app,
            NOURA,
            json!({"points": format!("-{over}"), "reason": "x", "reference": "r-2"})
        )
        .await,
        (
            409,
            operator_refusal(
                409,
                "OVERDRAWS_BALANCE",
                &format!(
                    "client {NOURA} holds {balance} points: the debit would leave a negative balance"
                )
            )
        )
    );
    assert_eq!(app.balance_of(NOURA).await, balance);
    let moved = "SELECT count(*) AS n FROM point_entries WHERE kind = 'support_adjustment'";
    assert_eq!(app.count(moved).await, 0);
    assert_eq!(
        app.count("SELECT count(*) AS n FROM support_adjustments")
            .await,
        0
    );
    assert_eq!(
        app.count("SELECT count(*) AS n FROM back_office_audit")
            .await,
        0
    );
}

#[tokio::test]
async fn a_replayed_adjustment_answers_the_first_and_another_use_of_its_reference_is_refused() {
    let app = spawn_app().await;
    let body = json!({"points": "5", "reason": "goodwill", "reference": "ticket-9"});
    let (status, first) = adjust(&app, SARA, body.clone()).await;
    assert_eq!(status, 201);
    let balance = app.balance_of(SARA).await;
    // A retry (the operator service timed out, the panel sent it again): the first answer.
    assert_eq!(adjust(&app, SARA, body.clone()).await, (200, first.clone()));
    let mut spaced = body.clone();
    spaced["reference"] = json!("  ticket-9 ");
    assert_eq!(adjust(&app, SARA, spaced).await, (200, first.clone()));
    // References that read the same are one (NFKC): full-width letters, a full-width hyphen.
    let mut wide = body.clone();
    wide["reference"] = json!("ｔｉｃｋｅｔ－９");
    assert_eq!(adjust(&app, SARA, wide).await, (200, first));
    // One that only looks the same with an invisible mark inside is refused, not a second one.
    for hidden in ["ticket\u{34f}-9", "ticket-\u{3164}9", "ticket-9\u{180b}"] {
        let mut marked = body.clone();
        marked["reference"] = json!(hidden);
        assert_eq!(
            adjust(&app, SARA, marked).await,
            (
                400,
                operator_refusal(
                    400,
                    "INVALID_REFERENCE",
                    "reference must be text of 1 to 200 visible characters"
                )
            ),
            "{hidden:?}"
        );
    }
    assert_eq!(app.balance_of(SARA).await, balance);
    let used = operator_refusal(
        409,
        "REFERENCE_USED",
        "reference ticket-9 was already used for another adjustment",
    );
    assert_eq!(adjust(&app, OMAR, body.clone()).await, (409, used.clone()));
    let mut other_amount = body.clone();
    other_amount["points"] = json!("6");
    assert_eq!(adjust(&app, SARA, other_amount).await, (409, used.clone()));
    // A second fix on the same ticket is another adjustment: the same reference is refused.
    let mut other_reason = body;
    other_reason["reason"] = json!("goodwill, second fix");
    assert_eq!(adjust(&app, SARA, other_reason).await, (409, used));
    // The credit route cannot take an adjustment's reference.
    assert_eq!(
        app.credit(
            &json!({"client_id": SARA, "points": "5", "reference": "support:ticket-9",
                           "reason": "gift_card"})
        )
        .await
        .0,
        400
    );
    assert_eq!(app.balance_of(SARA).await, balance);
    // Many tries of one new reference at once, for two clients: one adjustment.
    let racing = (0..12).map(|i| {
        let client = if i % 2 == 0 { SARA } else { OMAR };
        adjust(
            &app,
            client,
            json!({"points": "1", "reason": "race", "reference": "ticket-10"}),
        )
    });
    let outcomes = join_all(racing).await;
    let made = outcomes.iter().filter(|(s, _)| *s == 201).count();
    assert_eq!(made, 1, "{outcomes:?}");
    assert!(
        outcomes.iter().all(|(s, _)| [200, 201, 409].contains(s)),
        "{outcomes:?}"
    );
    assert_eq!(
        app.count("SELECT count(*) AS n FROM point_entries WHERE reference = 'support:ticket-10'")
            .await,
        1
    );
    let mut conn = app.database.connect().await;
    audit::run(&mut conn).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn debits_racing_point_orders_never_overdraw_and_the_audit_holds() {
    let app = spawn_app().await;
    // Noura holds exactly 1 200: ten orders of 120 would take it all, and so would twelve
    // debits of 100; both at once, in any order.
    app.sql(
        "INSERT INTO point_accounts (client_id) VALUES (1003); \
         INSERT INTO point_entries (client_id, kind, points) VALUES (1003, 'earn', 1200); \
         UPDATE point_accounts SET balance = 1200 WHERE client_id = 1003",
    )
    .await;
    let body = order_body(OMAR, "point");
    let orders = (0..10).map(|_| app.order(NOURA, &body));
    let debits = (0..12).map(|i| {
        adjust(
            &app,
            NOURA,
            json!({"points": "-100", "reason": "race", "reference": format!("race-{i}")}),
        )
    });
    let (orders, debits) = tokio::join!(join_all(orders), join_all(debits));
    let ordered = orders.iter().filter(|(s, _)| *s == 200).count();
    let debited = debits.iter().filter(|(s, _)| *s == 201).count();
    assert!(
        orders.iter().all(|(s, _)| [200, 422].contains(s))
            && debits.iter().all(|(s, _)| [201, 409].contains(s)),
        "{orders:?} {debits:?}"
    );
    let left: i64 =
        1200 - 120 * i64::try_from(ordered).unwrap() - 100 * i64::try_from(debited).unwrap();
    assert!((0..120).contains(&left), "left {left}");
    assert_eq!(app.balance_of(NOURA).await, left.to_string());
    let mut conn = app.database.connect().await;
    audit::run(&mut conn).await.unwrap();
    assert_eq!(
        app.count("SELECT count(*) AS n FROM back_office_audit WHERE action = 'adjustment.debit'")
            .await,
        i64::try_from(debited).unwrap()
    );
}

#[tokio::test]
async fn support_sees_a_clients_points_as_the_app_does() {
    let app = spawn_app().await;
    adjust(
        &app,
        SARA,
        json!({"points": "1", "reason": "x", "reference": "seen-1"}),
    )
    .await;
    let (status, points) = call(
        reqwest::Method::GET,
        &format!("/clients/{SARA}/points?page=1&limit=2"),
    )
    .send(&app)
    .await;
    assert_eq!(status, 200, "{points}");
    assert_eq!(points["balance"], app.balance(SARA).await.1);
    assert_eq!(
        points["history"],
        app.history("page=1&limit=2", SARA).await.1
    );
    for client in [GHOST.to_string(), "x".to_owned()] {
        assert_eq!(
            call(reqwest::Method::GET, &format!("/clients/{client}/points"))
                .send(&app)
                .await,
            (
                404,
                operator_refusal(
                    404,
                    "CLIENT_NOT_FOUND",
                    &format!("client {client} not found")
                )
            )
        );
    }
    let mut unauthorized = call(reqwest::Method::GET, &format!("/clients/{SARA}/points"));
    unauthorized.credential = Credential::Nothing;
    assert_eq!(unauthorized.send(&app).await.0, 401);
}

#[tokio::test]
async fn the_point_service_refuses_a_role_the_operator_service_would_not_let_through() {
    let app = spawn_app().await;
    let body = json!({"points": "5", "reason": "x", "reference": "role-1"});
    for role in ["admin", "data_entry", "Super_Admin"] {
        assert_eq!(
            call(reqwest::Method::POST, &adjustments(SARA))
                .by_role(role)
                .body(body.clone())
                .send(&app)
                .await,
            (
                403,
                operator_refusal(
                    403,
                    "ROLE_REFUSED",
                    &format!("role {role} may not do this in the back office")
                )
            )
        );
    }
    let offer = json!({"pointAmount": 1, "amount": 1});
    assert_eq!(
        call(reqwest::Method::POST, "/offers")
            .by_role("store_manager")
            .body(offer)
            .send(&app)
            .await
            .0,
        403
    );
    assert_eq!(
        app.count("SELECT count(*) AS n FROM back_office_audit")
            .await,
        0
    );
}
