//! The address book: a client's own addresses only, one default at most.

use serde_json::{Value, json};

use crate::helpers::*;

fn home() -> Value {
    json!({"label": "Home", "address_line": "12 Olaya St", "city": "Riyadh", "district": "Olaya",
           "building": "7", "latitude": 24.69, "longitude": 46.68, "notes": "Ring twice", "is_default": true})
}

async fn create(app: &TestApp, client: i64, body: &Value) -> Value {
    let (status, created) = answer(app.add_address(Some(&app.primary(client)), body).await).await;
    assert_eq!(status, 201, "{created}");
    created["data"].clone()
}

async fn list(app: &TestApp, client: i64) -> Vec<Value> {
    let (status, body) = answer(app.address_book(Some(&app.primary(client))).await).await;
    assert_eq!(status, 200);
    body["data"].as_array().unwrap().clone()
}

#[tokio::test]
async fn create_read_update_list_delete() {
    let app = spawn_app().await;
    let token = app.primary(SARA);
    let created = create(&app, SARA, &home()).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 24);
    assert_eq!(
        keys(&created),
        [
            "id",
            "client_id",
            "label",
            "address_line",
            "city",
            "district",
            "building",
            "latitude",
            "longitude",
            "notes",
            "is_default",
            "created_at",
            "updated_at"
        ]
    );
    assert_eq!(
        (created["client_id"].clone(), created["is_default"].clone()),
        (json!(SARA), json!(true))
    );

    let (status, read) = answer(app.address(&id, Some(&token)).await).await;
    assert_eq!((status, &read["data"]), (200, &created));

    let (status, updated) = answer(
        app.put(
            &format!("/api/v1/clients/address-book/{}", id.to_uppercase()),
            Some(&token),
            &json!({"notes": null, "city": "Jeddah"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            updated["data"]["notes"].clone(),
            updated["data"]["city"].clone()
        ),
        (Value::Null, json!("Jeddah"))
    );

    assert_eq!(list(&app, SARA).await.len(), 1);
    let (status, deleted) = answer(app.delete_address(&id, Some(&token)).await).await;
    assert_eq!(
        (status, deleted),
        (200, json!({"status": 200, "data": {"id": id}}))
    );
    assert!(list(&app, SARA).await.is_empty());
    assert_eq!(answer(app.address(&id, Some(&token)).await).await.0, 404);
}

#[tokio::test]
async fn another_clients_address_is_404_on_read_update_and_delete_and_unchanged() {
    let app = spawn_app().await;
    let sara_home = create(&app, SARA, &home()).await;
    let id = sara_home["id"].as_str().unwrap();
    let omar = app.primary(OMAR);
    let not_found = (404, json!({"status": 404, "message": "address not found"}));
    let (status, body) = answer(app.address(id, Some(&omar)).await).await;
    assert_eq!((status, without_stack(body)), not_found);
    let (status, body) = answer(
        app.update_address(id, Some(&omar), &json!({"city": "Dammam"}))
            .await,
    )
    .await;
    assert_eq!((status, without_stack(body)), not_found);
    let (status, body) = answer(app.delete_address(id, Some(&omar)).await).await;
    assert_eq!((status, without_stack(body)), not_found);
    assert!(list(&app, OMAR).await.is_empty());
    assert_eq!(list(&app, SARA).await, [sara_home]);
}

#[tokio::test]
async fn making_one_address_the_default_clears_the_others() {
    let app = spawn_app().await;
    let first = create(&app, SARA, &home()).await;
    let mut work = home();
    work["label"] = json!("Work");
    let second = create(&app, SARA, &work).await;
    let defaults = |addresses: &[Value]| {
        addresses
            .iter()
            .filter(|a| a["is_default"] == true)
            .map(|a| a["id"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(defaults(&list(&app, SARA).await), [second["id"].clone()]);
    app.update_address(
        first["id"].as_str().unwrap(),
        Some(&app.primary(SARA)),
        &json!({"is_default": true}),
    )
    .await;
    assert_eq!(defaults(&list(&app, SARA).await), [first["id"].clone()]);
    // Another client's default is not touched.
    let noura = create(&app, NOURA, &home()).await;
    assert_eq!(defaults(&list(&app, NOURA).await), [noura["id"].clone()]);
    assert_eq!(defaults(&list(&app, SARA).await), [first["id"].clone()]);
}

#[tokio::test]
async fn put_accepts_a_legacy_numeric_id_and_the_others_do_not() {
    let app = spawn_app().await;
    let created = create(&app, SARA, &home()).await;
    app.sql(&format!(
        "UPDATE addresses SET legacy_id = 77 WHERE id = '{}'",
        created["id"].as_str().unwrap()
    ))
    .await;
    let token = app.primary(SARA);
    let (status, body) = answer(
        app.put(
            "/api/v1/clients/address-book/77",
            Some(&token),
            &json!({"label": "Old home"}),
        )
        .await,
    )
    .await;
    assert_eq!(
        (status, body["data"]["label"].clone()),
        (200, json!("Old home"))
    );
    let bad_id = (
        400,
        json!({"status": 400, "message": "id must be a 24-character hex ObjectId"}),
    );
    let (status, body) = answer(
        app.get("/api/v1/clients/address-book/77", Some(&token))
            .await,
    )
    .await;
    assert_eq!((status, without_stack(body)), bad_id);
    let (status, body) = answer(
        app.send(
            reqwest::Method::DELETE,
            "/api/v1/clients/address-book/77",
            Some(&token),
            None,
        )
        .await,
    )
    .await;
    assert_eq!((status, without_stack(body)), bad_id);
    // Another client's legacy id is not found either.
    assert_eq!(
        answer(
            app.put(
                "/api/v1/clients/address-book/77",
                Some(&app.primary(OMAR)),
                &json!({"label": "x"})
            )
            .await
        )
        .await
        .0,
        404
    );
}

#[tokio::test]
async fn bad_fields_are_400_with_the_field_named() {
    let app = spawn_app().await;
    let token = app.primary(SARA);
    let mut body = home();
    body["latitude"] = json!(123);
    let (status, answer_body) = answer(app.add_address(Some(&token), &body).await).await;
    assert_eq!(
        (status, without_stack(answer_body)),
        (
            400,
            json!({"status": 400, "message": "latitude is invalid"})
        )
    );
    let (status, answer_body) = answer(
        app.add_address(Some(&token), &json!({"label": "Home"}))
            .await,
    )
    .await;
    assert_eq!(
        (status, without_stack(answer_body)),
        (
            400,
            json!({"status": 400, "message": "address_line is required"})
        )
    );
    assert!(list(&app, SARA).await.is_empty());
}
