//! `GET /system_configs/point_rates`.

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn rows_are_sorted_by_amount_from_with_null_as_zero() {
    let app = spawn_app().await;
    assert_eq!(
        app.point_rates("any=1").await,
        (
            200,
            json!([{"amount_from": null, "amount_to": 50, "point_earn": 5},
                     {"amount_from": 50, "amount_to": 100, "point_earn": 12},
                     {"amount_from": 100, "amount_to": null, "point_earn": 30}])
        )
    );
}

#[tokio::test]
async fn unset_is_an_empty_list_and_not_a_list_is_500_in_envelope_c() {
    let app = spawn_app().await;
    app.sql("DELETE FROM system_configs").await;
    assert_eq!(app.point_rates("any=1").await, (200, json!([])));
    app.sql(
        "INSERT INTO system_configs (key, value) VALUES ('point_rates', '{\"not\": \"a list\"}')",
    )
    .await;
    let (status, body) = app.point_rates("any=1").await;
    assert_eq!(status, 500);
    assert_eq!(
        body.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["message", "statusCode"]
    );
    assert_eq!(body["statusCode"], 500);
}
