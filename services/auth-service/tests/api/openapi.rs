//! The OpenAPI document describes every route the service serves.

use crate::helpers::*;

#[tokio::test]
async fn the_document_lists_every_route_with_its_method() {
    let app = spawn_app().await;
    let (status, doc) = answer(app.get("/openapi.json", None).await).await;
    assert_eq!(status, 200);
    let routes = [
        ("get", "/api/v1/clients/reset-otp"),
        ("get", "/api/v1/clients/verify-otp"),
        ("get", "/api/v1/clients/verify-token"),
        ("get", "/api/v1/clients"),
        ("get", "/api/v1/users"),
        ("post", "/api/v1/clients/exchange-token"),
        ("put", "/api/v1/clients/{client_id}"),
        ("put", "/api/v1/clients/setting"),
        ("post", "/api/v1/clients/add-device-id"),
        ("get", "/api/v1/clients/address-book"),
        ("post", "/api/v1/clients/address-book"),
        ("get", "/api/v1/clients/address-book/{id}"),
        ("put", "/api/v1/clients/address-book/{id}"),
        ("delete", "/api/v1/clients/address-book/{id}"),
        ("get", "/internal/v1/clients/{id}"),
        ("get", "/healthz"),
    ];
    for (method, path) in routes {
        assert!(
            doc["paths"][path][method].is_object(),
            "{method} {path} is missing"
        );
    }
    for schema in ["ErrorA", "Profile", "Address"] {
        assert!(
            doc["components"]["schemas"][schema].is_object(),
            "schema {schema} is missing"
        );
    }
    let error = &doc["components"]["schemas"]["ErrorA"]["properties"];
    assert!(error["status"].is_object() && error["message"].is_object());
}

/// What the route list registers, with the methods actix really serves on each path (the
/// `Allow` header of a 405), is what the document lists, and every path parameter is
/// declared.
#[tokio::test]
async fn every_registered_route_is_documented() {
    let app = spawn_app().await;
    server::testing::openapi::the_document_is_the_route_list(
        &app.client,
        &app.base,
        auth_service::routes::routes(),
    )
    .await;
}
