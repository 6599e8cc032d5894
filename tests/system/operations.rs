//! Every binary serves the operational routes, answers unknown routes in its own envelope
//! and stops cleanly on SIGTERM.

use db::testing::TestDatabase;
use e2e::{SERVICES, Service, run};

/// Migrated databases for the four services, and the services running on them.
pub struct System {
    pub services: Vec<Service>,
    _databases: Vec<TestDatabase>,
}

pub async fn start_all() -> System {
    let mut databases = Vec::new();
    let mut services = Vec::new();
    for (name, label) in SERVICES {
        let database = TestDatabase::empty(label).await;
        let migrated = run(name, &["migrate"], database.url(), &[]).await;
        assert!(
            migrated.status.success(),
            "{name} migrate: {}",
            String::from_utf8_lossy(&migrated.stderr)
        );
        services.push(Service::start(name, database.url(), &[]).await);
        databases.push(database);
    }
    System {
        services,
        _databases: databases,
    }
}

#[tokio::test]
async fn every_service_answers_healthz_readyz_metrics_and_its_openapi_document() {
    let system = start_all().await;
    for service in &system.services {
        for path in ["/healthz", "/readyz", "/metrics", "/openapi.json", "/docs/"] {
            assert_eq!(
                service.get(path).await.status(),
                200,
                "{} {path}",
                service.name
            );
        }
        let doc: serde_json::Value = service.get("/openapi.json").await.json().await.unwrap();
        assert!(
            doc["openapi"].as_str().unwrap().starts_with("3.1"),
            "{}",
            service.name
        );
        assert_eq!(doc["info"]["title"], service.name);
        // OpenAPI requires a description on every answer; tools (schemathesis, code
        // generators) refuse a document without.
        for (path, operations) in doc["paths"].as_object().unwrap() {
            for (method, operation) in operations.as_object().unwrap() {
                let Some(responses) = operation["responses"].as_object() else {
                    continue; // path-level `parameters`, not an operation
                };
                for (status, answer) in responses {
                    assert!(
                        answer["description"]
                            .as_str()
                            .is_some_and(|d| !d.is_empty()),
                        "{}: {method} {path} {status} has no description",
                        service.name
                    );
                }
            }
        }
        let metrics = service.get("/metrics").await.text().await.unwrap();
        assert!(
            metrics.contains(r#"http_requests_total{method="GET",route="/healthz",status="200"}"#),
            "{}",
            service.name
        );
        assert!(metrics.contains("db_pool_connections"), "{}", service.name);
    }
    for service in system.services {
        let name = service.name;
        let status = service.terminate().await;
        assert!(status.success(), "{name} exited with {status} on SIGTERM");
    }
}

#[tokio::test]
async fn unknown_routes_answer_in_each_services_envelope() {
    let system = start_all().await;
    let expected = [
        (
            "auth-service",
            r#"{"status":404,"message":"Cannot GET /nope"#,
        ),
        (
            "point-service",
            r#"{"success":false,"error":{"code":"NOT_FOUND","message":"Cannot GET /nope"}}"#,
        ),
        (
            "order-service",
            r#"{"message":"Cannot GET /nope","statusCode":404}"#,
        ),
        (
            "operator-service",
            r#"{"statusCode":404,"message":"Cannot GET /nope","error":"Not Found"}"#,
        ),
    ];
    for (service, (name, body)) in system.services.iter().zip(expected) {
        assert_eq!(service.name, name);
        let response = service.get("/nope").await;
        assert_eq!(response.status(), 404);
        // Envelope A adds `stack` outside production, after the message.
        assert!(response.text().await.unwrap().starts_with(body), "{name}");
    }
}
