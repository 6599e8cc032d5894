//! The programme's limit of points per SAR on an admin's offer (issue: "one admin request
//! mints points"): taken from `OFFER_MAX_POINTS_PER_SAR`, else from the offers `seed` loaded;
//! an admin above it is refused and nothing is written, a super_admin may and is counted.
//! The fixture's seeded offers give at most 1000 points for 120 SAR (8.3333… per SAR).

use serde_json::{Value, json};

use crate::back_office::{call, operator_refusal};
use crate::helpers::*;

async fn create(app: &TestApp, role: &str, body: Value) -> (u16, Value) {
    call(reqwest::Method::POST, "/offers")
        .by_role(role)
        .body(body)
        .send(app)
        .await
}

fn above(points: &str, amount: &str, limit: &str) -> (u16, Value) {
    (
        403,
        operator_refusal(
            403,
            "OFFER_ABOVE_POINTS_LIMIT",
            &format!(
                "an offer of {points} points for {amount} SAR gives more points per SAR than the \
                 {limit} an admin may give; a super_admin may"
            ),
        ),
    )
}

async fn offers_and_trail(app: &TestApp) -> (i64, i64) {
    (
        app.count("SELECT count(*) AS n FROM point_offers").await,
        app.count("SELECT count(*) AS n FROM back_office_audit")
            .await,
    )
}

async fn passed(app: &TestApp) -> Option<f64> {
    let text = testkit::metrics::scrape(&app.client, &app.base).await;
    testkit::metrics::value(
        &text,
        r#"back_office_guardrail_passed_total{guardrail="offer_points_per_sar"}"#,
    )
}

#[tokio::test]
async fn an_admin_is_held_to_the_seeded_offers_rate_and_a_super_admin_is_not() {
    let app = spawn_app().await;
    let before = offers_and_trail(&app).await;
    // Exactly the best seeded rate (1000 for 120) is within it; a hair above is not.
    let (status, at_the_limit) =
        create(&app, "admin", json!({"pointAmount": "250", "amount": "30"})).await;
    assert_eq!(status, 201, "{at_the_limit}");
    let refused = [
        (
            json!({"pointAmount": "250.0001", "amount": "30"}),
            above("250.0001", "30.00", "8.3333"),
        ),
        // The attack of the issue: 10^9 points for 0.01 SAR.
        (
            json!({"pointAmount": "1000000000", "amount": "0.01"}),
            above("1000000000", "0.01", "8.3333"),
        ),
        (
            json!({"pointAmount": "1", "amount": "0"}),
            above("1", "0.00", "8.3333"),
        ),
    ];
    let after_one = offers_and_trail(&app).await;
    assert_eq!(after_one, (before.0 + 1, before.1 + 1));
    for (body, refusal) in refused {
        assert_eq!(create(&app, "admin", body.clone()).await, refusal, "{body}");
    }
    assert_eq!(
        offers_and_trail(&app).await,
        after_one,
        "nothing written for a refusal"
    );
    assert_eq!(passed(&app).await, Some(0.0));

    let (status, generous) = create(
        &app,
        "super_admin",
        json!({"pointAmount": "1000", "amount": "1"}),
    )
    .await;
    assert_eq!(status, 201, "{generous}");
    assert_eq!(passed(&app).await, Some(1.0));
    // The super_admin's offer is no seeded one: it does not raise what an admin may give.
    assert_eq!(
        create(&app, "admin", json!({"pointAmount": "900", "amount": "1"})).await,
        above("900", "1.00", "8.3333")
    );
    // An admin may change the rest of an offer above the limit, and reprice it only to
    // within the limit, not even down while it stays above.
    let path = format!("/offers/{}", generous["id"].as_str().unwrap());
    let change = |body: Value| call(reqwest::Method::PATCH, &path).body(body);
    assert_eq!(change(json!({"sequence": 4})).send(&app).await.0, 200);
    assert_eq!(
        change(json!({"pointAmount": "999"})).send(&app).await,
        above("999", "1.00", "8.3333")
    );
    assert_eq!(change(json!({"pointAmount": "8"})).send(&app).await.0, 200);
}

#[tokio::test]
async fn an_offer_for_no_money_is_no_way_around_the_limit() {
    let app = spawn_app().await;
    // A points-only offer a super_admin made (0 SAR: no card pays it).
    let (status, free) = create(
        &app,
        "super_admin",
        json!({"pointAmount": "100", "purchasedPointAmount": "100", "amount": "0"}),
    )
    .await;
    assert_eq!(status, 201, "{free}");
    // Priced by an admin at 10^9 points for 0.01 SAR: a lower rate than free, and a mint.
    let path = format!("/offers/{}", free["id"].as_str().unwrap());
    let priced =
        json!({"pointAmount": "1000000000", "purchasedPointAmount": null, "amount": "0.01"});
    assert_eq!(
        call(reqwest::Method::PATCH, &path)
            .body(priced)
            .send(&app)
            .await,
        above("1000000000", "0.01", "8.3333")
    );
    // A seeded offer for 0 SAR, or a withdrawn generous one, sets no limit.
    app.sql(
        "INSERT INTO point_offers (id, point_amount, purchased_point_amount, amount, active, deleted) \
         VALUES ('aaaaaaaaaaaaaaaaaaaaaaa1', 5, 5, 0, true, false), \
                ('aaaaaaaaaaaaaaaaaaaaaaa2', 100000, NULL, 1, false, true)",
    )
    .await;
    assert_eq!(
        create(&app, "admin", json!({"pointAmount": "90", "amount": "10"})).await,
        above("90", "10.00", "8.3333")
    );
}

#[tokio::test]
async fn an_admin_may_not_raise_a_seeded_offer_above_the_limit() {
    let app = spawn_app().await;
    let path = format!("/offers/{OFFER_NO_POINTS_PRICE}");
    // The seeded 500 for 65: 541 for 65 is within 8.3333…, 542 for 65 is not.
    let raise =
        |points: &str| call(reqwest::Method::PATCH, &path).body(json!({"pointAmount": points}));
    let (status, raised) = raise("541").send(&app).await;
    assert_eq!(status, 200, "{raised}");
    assert_eq!(
        raise("542").send(&app).await,
        above("542", "65.00", "8.3333")
    );
}

#[tokio::test]
async fn the_setting_is_the_limit_when_it_is_set_above_the_seeded_rate_too() {
    let app = spawn_app_with(Options {
        offer_max_points_per_sar: Some("20".parse().unwrap()),
        ..Options::default()
    })
    .await;
    let (status, within) =
        create(&app, "admin", json!({"pointAmount": "200", "amount": "10"})).await;
    assert_eq!(status, 201, "{within}");
    assert_eq!(
        create(
            &app,
            "admin",
            json!({"pointAmount": "200.0001", "amount": "10"})
        )
        .await,
        above("200.0001", "10.00", "20")
    );
}

#[tokio::test]
async fn the_setting_is_the_limit_when_it_is_set() {
    let app = spawn_app_with(Options {
        offer_max_points_per_sar: Some("5.5".parse().unwrap()),
        ..Options::default()
    })
    .await;
    assert_eq!(
        create(
            &app,
            "admin",
            json!({"pointAmount": "60", "amount": "10.9"})
        )
        .await,
        above("60", "10.90", "5.5")
    );
    let (status, within) =
        create(&app, "admin", json!({"pointAmount": "55", "amount": "10"})).await;
    assert_eq!(status, 201, "{within}");
}

#[tokio::test]
async fn without_a_setting_or_a_seeded_offer_only_a_super_admin_makes_offers() {
    let app = spawn_app().await;
    // Every seeded offer withdrawn: none is on the programme's price list any more.
    app.sql("UPDATE point_offers SET deleted = true").await;
    assert_eq!(
        create(&app, "admin", json!({"pointAmount": "1", "amount": "100"})).await,
        (
            403,
            operator_refusal(
                403,
                "OFFER_POINTS_LIMIT_UNSET",
                "no limit of points per SAR is set (OFFER_MAX_POINTS_PER_SAR) or seeded: only a \
                 super_admin may make or raise an offer"
            )
        )
    );
    assert_eq!(
        create(
            &app,
            "super_admin",
            json!({"pointAmount": "1", "amount": "100"})
        )
        .await
        .0,
        201
    );
}
