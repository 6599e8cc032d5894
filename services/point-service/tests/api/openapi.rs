//! The OpenAPI document describes every route the service serves.

use crate::helpers::*;

#[tokio::test]
async fn the_document_lists_every_route_with_its_method() {
    let app = spawn_app().await;
    let doc = server::testing::openapi::document(&app.client, &app.base).await;
    let routes = [
        ("get", "/api/v2/client/points"),
        ("get", "/api/v2/client/point-history"),
        ("get", "/api/v2/client/points-faq"),
        ("get", "/api/v2/client/point-offers"),
        ("get", "/api/v2/client/point-offers/{id}"),
        ("get", "/api/v2/client/point-occasions"),
        ("post", "/api/v2/client/point-orders"),
        ("get", "/api/v2/client/point-orders/{correlation_id}"),
        ("post", "/api/v2/client/point-orders/description"),
        (
            "post",
            "/api/v2/client/point-orders/{correlation_id}/pay/card",
        ),
        (
            "post",
            "/api/v2/client/point-orders/{correlation_id}/pay/session",
        ),
        ("post", "/webhooks/v1/payments"),
        ("post", "/internal/v1/credits"),
    ];
    for (method, path) in routes {
        assert!(
            doc["paths"][path][method].is_object(),
            "{method} {path} is missing"
        );
    }
    assert!(doc["components"]["schemas"]["ErrorB"].is_object());
    assert!(
        doc["components"]["schemas"]["Balance"]["properties"]["pointsExpirationDate"].is_object()
    );
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
        point_service::routes::routes(),
    )
    .await;
}

/// A generated client fails on an enum value its document does not list: each closed set the
/// document shows is exactly what the database lets a row hold.
#[tokio::test]
async fn the_documents_closed_sets_are_the_databases() {
    let app = spawn_app().await;
    let doc = server::testing::openapi::document(&app.client, &app.base).await;
    for (schema, table, column) in [
        ("OrderStatus", "point_orders", "status"),
        ("PaymentStatus", "point_orders", "payment_status"),
        ("PaymentType", "point_orders", "payment_type"),
        ("OrderType", "point_orders", "order_type"),
        ("LedgerKind", "point_entries", "kind"),
    ] {
        assert_eq!(
            testkit::closed_sets::documented(&doc, schema),
            testkit::closed_sets::allowed(&app.database, table, column).await,
            "{schema} and {table}.{column}"
        );
    }
}
