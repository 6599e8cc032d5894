//! `POST /api/v1/clients/add-device-id`: the fixed answer.

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn echoes_the_device_id_with_the_fixed_ids_for_any_caller() {
    let app = spawn_app().await;
    let (status, body) = answer(
        app.post(
            &paths::with_query(paths::add_device_id(), "x=1"),
            Some("whatever"),
            &json!({"device_id": "abc", "other": 1}),
        )
        .await,
    )
    .await;
    assert_eq!(
        (status, body.to_string()),
        (
            200,
            r#"{"id":920,"client_id":356315,"device_id":"abc"}"#.to_owned()
        )
    );
}

#[tokio::test]
async fn without_a_device_id_the_fixed_one_is_answered() {
    let app = spawn_app().await;
    let fixed = json!({"id": 920, "client_id": 356315, "device_id": "46AE56EF-29BA-40AE-B436-AF22B119FE1E"});
    for body in [None, Some("{}"), Some("not json")] {
        let (status, answer_body) = answer(
            app.send(reqwest::Method::POST, &paths::add_device_id(), None, body)
                .await,
        )
        .await;
        assert_eq!((status, answer_body), (200, fixed.clone()), "{body:?}");
    }
}
