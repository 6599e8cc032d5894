//! The earn-rate table: read with its version, replaced on it, refused when stale, recorded,
//! and what the app reads next.

use back_office::earn_rates::RatesRefusal;
use reqwest::Method;
use serde_json::{Value, json};

use super::{call, newest_change, refusal};
use crate::helpers::*;

async fn table(app: &TestApp) -> Value {
    let (status, table) = call(Method::GET, "/earn-rates").send(app).await;
    assert_eq!(status, 200, "{table}");
    table
}

async fn replace(app: &TestApp, body: Value) -> (u16, Value) {
    call(Method::PUT, "/earn-rates").body(body).send(app).await
}

/// The app's rows as the back office answers them: each number as its exact decimal text.
fn as_text(app_rows: &Value) -> Value {
    let text = |value: &Value| match value {
        Value::Number(number) => json!(number.to_string()),
        other => other.clone(),
    };
    let rows = app_rows.as_array().unwrap().iter().map(|row| {
        let row = row.as_object().unwrap();
        row.iter()
            .map(|(key, value)| (key.clone(), text(value)))
            .collect::<serde_json::Map<_, _>>()
    });
    Value::Array(rows.map(Value::Object).collect())
}

#[tokio::test]
async fn the_table_is_replaced_on_its_version_and_the_app_reads_it_next() {
    let app = spawn_app().await;
    let before = table(&app).await;
    assert_eq!(testkit::keys(&before), ["rates", "version", "updatedAt"]);
    // As the app reads the seeded table, sorted (null counts as 0), as decimal text.
    let (_, app_rows) = app.point_rates("").await;
    assert_eq!(before["rates"], as_text(&app_rows));
    let version = before["version"].as_i64().unwrap();
    assert!(version > 0);

    let rows = json!([
        {"amount_from": 0, "amount_to": 20.5, "point_earn": 0},
        {"amount_from": "20.50", "amount_to": 99.99, "point_earn": "7.125"},
        {"amount_from": 99.99, "amount_to": null, "point_earn": 40}
    ]);
    let (status, after) = replace(&app, json!({"rates": rows, "version": version})).await;
    assert_eq!(status, 200, "{after}");
    let stored = json!([
        {"amount_from": 0, "amount_to": 20.5, "point_earn": 0},
        {"amount_from": 20.5, "amount_to": 99.99, "point_earn": 7.125},
        {"amount_from": 99.99, "amount_to": null, "point_earn": 40}
    ]);
    assert_eq!(
        after["rates"],
        json!([
            {"amount_from": "0", "amount_to": "20.5", "point_earn": "0"},
            {"amount_from": "20.5", "amount_to": "99.99", "point_earn": "7.125"},
            {"amount_from": "99.99", "amount_to": null, "point_earn": "40"}
        ])
    );
    assert!(after["version"].as_i64().unwrap() > version);
    assert_eq!(app.point_rates("").await, (200, stored.clone()));
    assert_eq!(table(&app).await, after);

    let change = newest_change(&app).await;
    assert_eq!(change["action"], "earn-rates.replace");
    assert_eq!(change["subject"], "earn-rates");
    assert_eq!(change["before"], before);
    assert_eq!(change["after"], after);

    // Made from the version before: refused, and nothing changes.
    let stale = json!({"rates": [{"amount_from": 0, "amount_to": null, "point_earn": 1}],
                       "version": version});
    assert_eq!(
        replace(&app, stale).await,
        refusal(RatesRefusal::Stale(
            version,
            after["version"].as_i64().unwrap()
        ))
    );
    assert_eq!(app.point_rates("").await, (200, stored));
}

#[tokio::test]
async fn a_stale_edit_says_both_versions_in_its_words() {
    let app = spawn_app().await;
    let version = table(&app).await["version"].as_i64().unwrap();
    let body = json!({"rates": [{"amount_from": 0, "amount_to": null, "point_earn": 1}],
                      "version": version + 5});
    assert_eq!(
        replace(&app, body).await,
        (
            409,
            testkit::back_office_error(
                409,
                "STALE_VERSION",
                &format!(
                    "the earn-rate table is at version {version}, not {}: read it again and make the change on it",
                    version + 5
                )
            )
        )
    );
}

#[tokio::test]
async fn with_no_table_the_first_is_made_from_version_0_and_a_seed_change_moves_the_version() {
    let app = spawn_app().await;
    app.sql("DELETE FROM system_configs WHERE key = 'point_rates'")
        .await;
    let empty = table(&app).await;
    assert_eq!(empty, json!({"rates": [], "version": 0, "updatedAt": null}));
    let body =
        json!({"rates": [{"amount_from": 0, "amount_to": null, "point_earn": 2}], "version": 0});
    let (status, first) = replace(&app, body.clone()).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(change_count(&app).await, 1);
    // A second first table is stale.
    assert_eq!(replace(&app, body).await.0, 409);
    // The same table again changes nothing and records nothing.
    let same = json!({"rates": [{"amount_from": 0, "amount_to": null, "point_earn": 2}],
                      "version": first["version"]});
    assert_eq!(replace(&app, same).await, (200, first.clone()));
    assert_eq!(change_count(&app).await, 1);
    // A write of the same value keeps the version; another value takes a new one.
    app.sql("UPDATE system_configs SET value = value WHERE key = 'point_rates'")
        .await;
    assert_eq!(table(&app).await["version"], first["version"]);
    app.sql("UPDATE system_configs SET value = '[]' WHERE key = 'point_rates'")
        .await;
    assert!(table(&app).await["version"].as_i64() > first["version"].as_i64());
}

async fn change_count(app: &TestApp) -> usize {
    let (_, trail) = call(Method::GET, "/catalog-audit").send(app).await;
    trail["data"].as_array().unwrap().len()
}

#[tokio::test]
async fn every_table_refusal_in_its_words() {
    let app = spawn_app().await;
    let version = table(&app).await["version"].as_i64().unwrap();
    let row = |from: Value, to: Value, earn: Value| json!({"amount_from": from, "amount_to": to, "point_earn": earn});
    let with = |rows: Vec<Value>| json!({"rates": rows, "version": version});
    let cases = [
        (json!([]), "NOT_AN_OBJECT", "the body must be a JSON object"),
        (
            json!({"rows": []}),
            "UNKNOWN_FIELD",
            "rows is not a field of the earn-rate table",
        ),
        (
            json!({"rates": {}, "version": version}),
            "INVALID_RATES",
            "rates must be a list of 1 to 100 rows",
        ),
        (
            with(vec![json!({"amount_from": 0, "amount_to": null})]),
            "INVALID_RATE_ROW",
            "rates[0] must be an object of amount_from, amount_to and point_earn",
        ),
        (
            with(vec![row(json!("1.001"), json!(null), json!(1))]),
            "INVALID_AMOUNT_FROM",
            "rates[0].amount_from must be an amount of SAR from 0, with at most 2 decimals",
        ),
        (
            with(vec![
                row(json!(0), json!(50), json!(1)),
                row(json!(51), json!(null), json!(1)),
            ]),
            "RATES_NOT_CONTIGUOUS",
            "rates[1].amount_from must be 50, where the row before it ends",
        ),
        (
            with(vec![
                row(json!(5), json!(4), json!(1)),
                row(json!(4), json!(null), json!(1)),
            ]),
            "INVALID_AMOUNT_TO",
            "rates[0].amount_to must be an amount of SAR above its amount_from, with at most 2 decimals",
        ),
        (
            with(vec![row(json!(0), json!(10), json!(1))]),
            "RATES_NOT_OPEN_ENDED",
            "rates[0].amount_to must be null: the last row is open-ended",
        ),
        (
            with(vec![row(json!(0), json!(null), json!(1e10))]),
            "INVALID_POINT_EARN",
            "rates[0].point_earn must be points from 0 to 1000000000, with at most 4 decimals",
        ),
        (
            json!({"rates": [row(json!(0), json!(null), json!(1))], "version": "1"}),
            "INVALID_VERSION",
            "version must be the integer version the change was made from",
        ),
    ];
    for (body, code, message) in cases {
        assert_eq!(
            replace(&app, body.clone()).await,
            (400, testkit::back_office_error(400, code, message)),
            "{body}"
        );
    }
    assert_eq!(change_count(&app).await, 0);
}

#[tokio::test]
async fn a_role_below_admin_is_refused_by_the_order_service_too() {
    let app = spawn_app().await;
    let version = table(&app).await["version"].as_i64().unwrap();
    let mut put = call(Method::PUT, "/earn-rates").body(
        json!({"rates": [{"amount_from": 0, "amount_to": null, "point_earn": 1}], "version": version}),
    );
    put.operator = Some(("op-1", "merchant_manager"));
    assert_eq!(
        put.send(&app).await,
        (
            403,
            testkit::back_office_error(
                403,
                "ROLE_REFUSED",
                "role merchant_manager may not do this in the back office"
            )
        )
    );
    assert_eq!(change_count(&app).await, 0);
}

#[tokio::test]
async fn of_two_edits_from_one_version_exactly_one_is_made() {
    let app = spawn_app().await;
    let version = table(&app).await["version"].as_i64().unwrap();
    let edit = |earn: i64| {
        replace(
            &app,
            json!({"rates": [{"amount_from": 0, "amount_to": null, "point_earn": earn}], "version": version}),
        )
    };
    let (a, b) = tokio::join!(edit(1), edit(2));
    let mut statuses = [a.0, b.0];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409], "{a:?} {b:?}");
    assert_eq!(change_count(&app).await, 1);
}

#[tokio::test]
async fn a_stored_value_that_is_no_number_is_named_and_a_replacement_mends_it() {
    let app = spawn_app().await;
    let version = table(&app).await["version"].as_i64().unwrap();
    // Only `seed` can store such a row (the spec's "any other JSON value is stored as is").
    app.sql(
        "UPDATE system_configs SET value = \
         '[{\"amount_from\": 0, \"amount_to\": null, \"point_earn\": \"lots\"}]' \
         WHERE key = 'point_rates'",
    )
    .await;
    let (status, body) = call(Method::GET, "/earn-rates").send(&app).await;
    assert_eq!(status, 500, "{body}");
    assert_eq!(
        body["message"],
        "the stored earn-rate table holds rates[0].point_earn, which is neither a number nor null"
    );
    // The app reads it as stored, as before.
    assert_eq!(app.point_rates("").await.0, 200);
    // The 409 names the version to make the replacement from.
    let current = match replace(
        &app,
        json!({"rates": [{"amount_from": 0, "amount_to": null, "point_earn": 1}], "version": 0}),
    )
    .await
    {
        (409, refused) => refused["message"]
            .as_str()
            .unwrap()
            .split(' ')
            .nth(6)
            .unwrap()
            .trim_end_matches(',')
            .parse::<i64>()
            .unwrap(),
        other => panic!("{other:?}"),
    };
    assert!(current > version);
    let mended = json!({"rates": [{"amount_from": 0, "amount_to": null, "point_earn": "2.5"}], "version": current});
    let (status, after) = replace(&app, mended).await;
    assert_eq!(status, 200, "{after}");
    assert_eq!(
        after["rates"],
        json!([{"amount_from": "0", "amount_to": null, "point_earn": "2.5"}])
    );
}
