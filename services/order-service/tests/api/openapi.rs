//! The OpenAPI document describes every route the service serves: each path and method,
//! its parameters, its answers with their envelopes, and the messages the code really sends.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};

use server::testing::openapi::{self, described, documented, says, schema_ref};

use crate::helpers::*;

/// The service's own routes (envelope C).
const OWN: [(&str, &str); 8] = [
    ("get", "/api/v2/client/system_configs/point_rates"),
    ("post", "/api/v2/client/gift-card-code"),
    ("get", "/api/v2/client/system-categories"),
    ("get", "/api/v2/client/system-categories/{id}"),
    ("get", "/api/v2/client/system-categories/{id}/children"),
    ("get", "/api/v2/client/stores"),
    ("get", "/api/v2/client/stores/{id}"),
    (
        "get",
        "/api/v2/client/banners/merchant/{merchant_id}/nearest-store",
    ),
];

/// The point routes, relayed to the point service.
const RELAYED: [(&str, &str); 11] = [
    ("get", "/api/v2/client/points"),
    ("get", "/api/v2/client/point-history"),
    ("get", "/api/v2/client/points-faq"),
    ("get", "/api/v2/client/point-offers"),
    ("get", "/api/v2/client/point-offers/{id}"),
    ("get", "/api/v2/client/point-occasions"),
    ("post", "/api/v2/client/point-orders"),
    ("post", "/api/v2/client/point-orders/description"),
    ("get", "/api/v2/client/point-orders/{correlation_id}"),
    (
        "post",
        "/api/v2/client/point-orders/{correlation_id}/pay/card",
    ),
    (
        "post",
        "/api/v2/client/point-orders/{correlation_id}/pay/session",
    ),
];

/// The loyalty back office's catalog routes, which the operator service relays here.
const BACK_OFFICE: [(&str, &str); 8] = [
    ("get", "/internal/v1/back-office/gift-code-batches"),
    ("post", "/internal/v1/back-office/gift-code-batches"),
    ("get", "/internal/v1/back-office/gift-code-batches/{id}"),
    (
        "get",
        "/internal/v1/back-office/gift-code-batches/{id}/codes.csv",
    ),
    ("delete", "/internal/v1/back-office/gift-code-batches/{id}"),
    ("get", "/internal/v1/back-office/earn-rates"),
    ("put", "/internal/v1/back-office/earn-rates"),
    ("get", "/internal/v1/back-office/catalog-audit"),
];

async fn document(app: &TestApp) -> Value {
    openapi::document(&app.client, &app.base).await
}

fn listed() -> BTreeSet<(String, String)> {
    OWN.iter()
        .chain(&RELAYED)
        .chain(&BACK_OFFICE)
        .chain(&openapi::OPS)
        .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
        .collect()
}

#[tokio::test]
async fn the_document_lists_every_route_and_nothing_else() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    assert_eq!(documented(&doc), listed());
    assert_eq!(openapi::listed(order_service::routes::routes()), listed());
    for schema in [
        "ErrorB",
        "ErrorBInner",
        "ErrorC",
        "Rate",
        "RedeemBody",
        "Redeemed",
        "ServiceItem",
        "ServiceDetail",
        "Store",
        "NearestStore",
        // The relayed routes' own, from the point service's definitions.
        "Balance",
        "HistoryPage",
        "Offer",
        "Occasion",
        "Order",
        "OrderBody",
    ] {
        assert!(
            doc["components"]["schemas"][schema].is_object(),
            "schema {schema} is missing"
        );
    }
    let legacy = &doc["components"]["securitySchemes"]["legacy"];
    assert_eq!(
        (&legacy["type"], &legacy["scheme"]),
        (&json!("http"), &json!("bearer"))
    );
}

#[tokio::test]
async fn the_back_offices_routes_are_internal_and_refuse_in_the_back_offices_envelope() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    for (method, path) in BACK_OFFICE {
        let operation = &doc["paths"][path][method];
        assert_eq!(operation["x-audience"], "internal", "{method} {path}");
        // The operator service's own credential; the operator travels inside it, in no
        // header of its own.
        assert_eq!(
            operation["security"],
            serde_json::json!([{"service": []}]),
            "{method} {path}"
        );
        let headers: Vec<&serde_json::Value> = operation["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["in"] == "header")
            .collect();
        assert!(headers.is_empty(), "{method} {path}: {headers:?}");
        let answers = operation["responses"].as_object().unwrap();
        assert_eq!(
            schema_ref(&answers["401"]),
            Some("#/components/schemas/BackOfficeError"),
            "{method} {path}"
        );
    }
}

#[tokio::test]
async fn every_operation_declares_its_parameters_answers_and_envelopes() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    openapi::path_parameters_are_declared(&doc);
    for (method, path) in OWN.iter().chain(&RELAYED) {
        let operation = &doc["paths"][path][method];
        let answers = operation["responses"].as_object().unwrap();
        assert!(
            schema_ref(&answers["200"]).is_some() || answers["200"]["content"].is_object(),
            "{method} {path}: the 200 answer has no schema"
        );
        let relayed = RELAYED.contains(&(method, path));
        for (status, answer) in answers {
            assert!(
                !answer["description"]
                    .as_str()
                    .unwrap_or_default()
                    .is_empty(),
                "{method} {path} {status}: no description"
            );
            if status.starts_with('2') {
                continue;
            }
            // Own errors are envelope C; the relay's (and the point service's) envelope B;
            // a body too large, too slow or in an unknown coding is refused by the order
            // service itself, in envelope C, and a 400 is either the point service's (B) or
            // the order service's own refusal of a NUL or too deep a body (C). The pay
            // routes' `4XX` is the payment service's own answer, passed through as it came:
            // its body, no envelope of ours.
            if relayed && status == "4XX" && path.contains("/pay/") {
                assert_eq!(
                    schema_ref(answer),
                    Some("#/components/schemas/PaymentServiceError"),
                    "{method} {path} {status}"
                );
                continue;
            }
            // On the pay routes any 4xx may also be the payment service's, passed on.
            let passed_on = relayed && path.contains("/pay/") && status.starts_with('4');
            let refs = |names: &[&str]| {
                json!(
                    names
                        .iter()
                        .map(|name| json!({"$ref": format!("#/components/schemas/{name}")}))
                        .collect::<Vec<_>>()
                )
            };
            let either = &answer["content"]["application/json"]["schema"]["anyOf"];
            if relayed && status == "400" {
                let expected: &[&str] = if passed_on {
                    &["ErrorB", "PaymentServiceError", "ErrorC"]
                } else {
                    &["ErrorB", "ErrorC"]
                };
                assert_eq!(either, &refs(expected), "{method} {path} {status}");
                continue;
            }
            let door = ["408", "413", "415"].contains(&status.as_str());
            let envelope = if !relayed || door { "ErrorC" } else { "ErrorB" };
            if passed_on && !door {
                assert_eq!(
                    either,
                    &refs(&[envelope, "PaymentServiceError"]),
                    "{method} {path} {status}"
                );
                continue;
            }
            assert_eq!(
                schema_ref(answer),
                Some(format!("#/components/schemas/{envelope}").as_str()),
                "{method} {path} {status}"
            );
        }
        if relayed {
            assert!(
                operation["description"]
                    .as_str()
                    .unwrap()
                    .contains("Relayed to the point service unchanged"),
                "{method} {path}"
            );
            assert_eq!(operation["security"], json!([{"legacy": []}]));
            for status in ["502", "504"] {
                assert!(answers.contains_key(status), "{method} {path}: no {status}");
            }
            assert_eq!(
                operation["requestBody"].is_object(),
                *method == "post",
                "{method} {path}"
            );
        }
    }
    let redeem = &doc["paths"]["/api/v2/client/gift-card-code"]["post"];
    assert_eq!(redeem["security"], json!([{"legacy": []}]));
    assert_eq!(
        redeem["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/RedeemBody"
    );
    for (method, path) in OWN.iter().filter(|(_, p)| !p.ends_with("gift-card-code")) {
        assert!(
            doc["paths"][path][method]["security"].is_null(),
            "{method} {path} takes no token"
        );
    }
}

/// Every path of the route list, with the methods actix really serves on it (the `Allow`
/// header of a 405), is documented, and nothing else is.
#[tokio::test]
async fn every_registered_route_is_documented() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    openapi::registered_routes_are_documented(
        &app.client,
        &app.base,
        order_service::routes::routes(),
        &doc,
    )
    .await;
}

#[tokio::test]
async fn the_own_routes_document_the_messages_they_send() {
    let app = spawn_app().await;
    let doc = document(&app).await;
    let redeem = "/api/v2/client/gift-card-code";
    let post = |body: Value, token: Option<&str>| {
        let mut request = app.client.post(app.url(redeem)).json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move { answer(request.send().await.unwrap()).await }
    };
    let caller = token(1001);
    says(
        &doc,
        "post",
        redeem,
        &post(json!({"code": "WELCOME-100"}), None).await,
        "Missing or invalid authorization header",
    );
    says(
        &doc,
        "post",
        redeem,
        &post(json!({"code": "WELCOME-100"}), Some("bad")).await,
        "Invalid or expired token",
    );
    says(
        &doc,
        "post",
        redeem,
        &post(json!({}), Some(&caller)).await,
        "code is required",
    );
    says(
        &doc,
        "post",
        redeem,
        &post(json!({"code": "NOPE"}), Some(&caller)).await,
        "The code not exist",
    );
    let redeemed = post(json!({"code": "WELCOME-100"}), Some(&caller)).await;
    assert_eq!(redeemed.0, 200);
    says(
        &doc,
        "post",
        redeem,
        &post(json!({"code": "WELCOME-100"}), Some(&caller)).await,
        "The code has already been used",
    );
    app.credits_fail
        .store(true, std::sync::atomic::Ordering::SeqCst);
    says(
        &doc,
        "post",
        redeem,
        &post(json!({"code": "RAMADAN-250"}), Some(&caller)).await,
        "The points could not be credited yet, try again",
    );

    let big = app
        .client
        .post(app.url(redeem))
        .bearer_auth(&caller)
        .header("content-type", "application/json")
        .body(vec![b' '; 300 * 1024])
        .send()
        .await
        .unwrap();
    says(
        &doc,
        "post",
        redeem,
        &answer(big).await,
        "Payload Too Large",
    );
    let limited = spawn_app_with(Options {
        tries_per_client: 1,
        ..Options::default()
    })
    .await;
    assert_eq!(limited.redeem(1001, "NOPE").await.0, 404);
    says(
        &doc,
        "post",
        redeem,
        &limited.redeem(1001, "WELCOME-100").await,
        "Too many attempts, try again later",
    );

    let detail = "/api/v2/client/system-categories/{id}";
    let children = "/api/v2/client/system-categories/{id}/children";
    for (path, concrete) in [
        (detail, "/api/v2/client/system-categories/999"),
        (detail, "/api/v2/client/system-categories/abc"),
        (children, "/api/v2/client/system-categories/999/children"),
    ] {
        says(
            &doc,
            "get",
            path,
            &app.get(concrete).await,
            "Service is not found",
        );
    }
    says(
        &doc,
        "get",
        "/api/v2/client/stores/{id}",
        &app.get("/api/v2/client/stores/999").await,
        "Store not found",
    );
    says(
        &doc,
        "get",
        "/api/v2/client/stores",
        &app.get("/api/v2/client/stores").await,
        "merchantId must be an integer",
    );
    // A repeated coordinate is no reason for anything but 200 (docs/design.md); the first counts.
    let (status, body) = app
        .get("/api/v2/client/banners/merchant/77/nearest-store?latitude=24.69&latitude=2&longitude=46.68")
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.as_object().unwrap().contains_key("store_id"), "{body}");
    // Its only 400 is the door's (a NUL anywhere in the request), never a coordinate's.
    let nearest = "/api/v2/client/banners/merchant/{merchant_id}/nearest-store";
    says(
        &doc,
        "get",
        nearest,
        &app.get("/api/v2/client/banners/merchant/77/nearest-store?latitude=24.69&x=%00")
            .await,
        "Invalid input: text must not contain NUL characters",
    );
    assert_eq!(
        described(&doc, "get", nearest, "400"),
        envelope::openapi::door_400_description()
    );
}

#[tokio::test]
async fn the_relay_documents_its_own_two_errors() {
    let app = spawn_app_with(Options {
        point_service: false,
        ..Options::default()
    })
    .await;
    let doc = document(&app).await;
    let (status, body) = app.get("/api/v2/client/points").await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (502, &json!("POINT_SERVICE_UNAVAILABLE"))
    );
    let unavailable = described(&doc, "get", "/api/v2/client/points", "502");
    assert!(unavailable.contains("POINT_SERVICE_UNAVAILABLE"));
    assert!(unavailable.contains("Point service unavailable: "));
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Point service unavailable: ")
    );

    let big = app
        .client
        .post(app.url("/api/v2/client/point-orders"))
        .header("content-type", "application/json")
        .body(vec![b' '; 300 * 1024])
        .send()
        .await
        .unwrap();
    says(
        &doc,
        "post",
        "/api/v2/client/point-orders",
        &answer(big).await,
        "Payload Too Large",
    );

    let app = spawn_app_with(Options {
        relay_timeout: Duration::from_millis(300),
        ..Options::default()
    })
    .await;
    // The fake point service takes 3 s over the FAQ.
    let (status, body) = app.get("/api/v2/client/points-faq").await;
    assert_eq!(status, 504);
    let timeout = described(&doc, "get", "/api/v2/client/points-faq", "504");
    assert!(timeout.contains(body["error"]["code"].as_str().unwrap()));
    assert!(timeout.contains(body["error"]["message"].as_str().unwrap()));
}
