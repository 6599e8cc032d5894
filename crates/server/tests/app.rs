//! The shared app shell over real HTTP and a real database: operational routes, error
//! bodies for actix's own errors, request ids and graceful stop.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::{HttpResponse, web};
use db::testing::TestDatabase;
use envelope::Envelope;
use server::{AppSettings, HttpLimits};

struct TestApp {
    base: String,
    /// Signalled by `/slow` once a request is inside the handler.
    slow_started: Arc<tokio::sync::Notify>,
    handle: actix_web::dev::ServerHandle,
    client: reqwest::Client,
    _database: Option<TestDatabase>,
}

async fn slow(started: web::Data<tokio::sync::Notify>) -> HttpResponse {
    started.notify_one();
    tokio::time::sleep(Duration::from_millis(800)).await;
    HttpResponse::Ok().body("finished")
}

async fn spawn(envelope: Envelope, pool: db::Pool, database: Option<TestDatabase>) -> TestApp {
    let settings = AppSettings {
        service: "test-service",
        envelope,
        show_internals: false,
        pool,
        openapi: server::ops::openapi().into(),
        http: server::HttpLimits::default(),
    };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let slow_started = web::Data::new(tokio::sync::Notify::new());
    let started = slow_started.clone();
    let server = server::http_server_with(listener, 1, HttpLimits::default(), move || {
        server::app(settings.clone())
            .app_data(started.clone())
            .route("/slow", web::get().to(slow))
            .service(web::resource("/only-post").route(web::post().to(HttpResponse::Ok)))
            .route(
                "/echo",
                web::post().to(|body: web::Bytes| async move { HttpResponse::Ok().body(body) }),
            )
    })
    .unwrap();
    let handle = server.handle();
    tokio::spawn(server);
    TestApp {
        base,
        slow_started: slow_started.into_inner(),
        handle,
        client: reqwest::Client::new(),
        _database: database,
    }
}

async fn spawn_with_database(envelope: Envelope) -> TestApp {
    let database = TestDatabase::empty("server").await;
    let pool = db::build_pool(&db::PoolSettings::new(database.url(), 2)).unwrap();
    spawn(envelope, pool, Some(database)).await
}

impl TestApp {
    async fn get(&self, path: &str) -> reqwest::Response {
        self.client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap()
    }
}

#[tokio::test]
async fn healthz_and_readyz_answer_200_with_a_database() {
    let app = spawn_with_database(Envelope::B).await;
    let health = app.get("/healthz").await;
    assert_eq!(health.status(), 200);
    assert_eq!(health.text().await.unwrap(), r#"{"status":"ok"}"#);
    let ready = app.get("/readyz").await;
    assert_eq!(ready.status(), 200);
    assert_eq!(
        ready.text().await.unwrap(),
        r#"{"status":"ready","checks":{"database":"up"}}"#
    );
    // Counted by outcome, for the readiness alert (no other test here passes a check).
    let metrics = app.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("readiness_checks_total{outcome=\"ready\"} 1\n"),
        "{metrics}"
    );
}

#[tokio::test]
async fn readyz_is_503_and_healthz_200_without_a_database() {
    let mut settings = db::PoolSettings::new("postgres://postgres@127.0.0.1:1/nothing", 2);
    settings.connect_timeout = Duration::from_millis(300);
    let app = spawn(Envelope::B, db::build_pool(&settings).unwrap(), None).await;
    let ready = app.get("/readyz").await;
    assert_eq!(ready.status(), 503);
    assert_eq!(
        ready.text().await.unwrap(),
        r#"{"status":"unavailable","checks":{"database":"down"}}"#
    );
    assert_eq!(app.get("/healthz").await.status(), 200);
    // The failed check is counted while the process still answers `/metrics`: what the
    // readiness alert reads (no other test here fails a check).
    let metrics = app.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("readiness_checks_total{outcome=\"unavailable\"} 1\n"),
        "{metrics}"
    );
}

#[tokio::test]
async fn metrics_show_requests_by_route_and_status_and_pool_usage() {
    let app = spawn_with_database(Envelope::B).await;
    app.get("/healthz").await;
    app.get("/no/such/path/123").await;
    let metrics = app.get("/metrics").await;
    assert_eq!(metrics.status(), 200);
    assert!(
        metrics.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let text = metrics.text().await.unwrap();
    assert!(
        text.contains(r#"http_requests_total{method="GET",route="/healthz",status="200"} "#),
        "{text}"
    );
    assert!(text.contains(r#"route="unmatched",status="404""#), "{text}");
    assert!(
        text.contains("http_request_duration_seconds_bucket"),
        "{text}"
    );
    assert!(
        text.contains(r#"db_pool_connections{state="max"} 2"#),
        "{text}"
    );
}

#[tokio::test]
async fn invented_methods_share_one_other_series_in_the_metrics() {
    let app = spawn_with_database(Envelope::B).await;
    for n in 0..50 {
        let method = reqwest::Method::from_bytes(format!("QWERTY{n}").as_bytes()).unwrap();
        let answer = app
            .client
            .request(method, format!("{}/healthz", app.base))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 405);
    }
    let text = app.get("/metrics").await.text().await.unwrap();
    let requests: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("http_requests_total{"))
        .collect();
    let other: Vec<&&str> = requests
        .iter()
        .filter(|line| line.contains(r#"method="other""#))
        .collect();
    assert_eq!(other.len(), 1, "{text}");
    assert!(
        other[0].ends_with(" 50"),
        "all fifty counted in one series: {text}"
    );
    assert!(!text.contains("QWERTY"), "{text}");
}

#[tokio::test]
async fn openapi_document_and_docs_page_are_served() {
    let app = spawn_with_database(Envelope::B).await;
    let doc = app.get("/openapi.json").await;
    assert_eq!(doc.status(), 200);
    let doc: serde_json::Value = doc.json().await.unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    assert!(doc["paths"]["/readyz"]["get"].is_object());
    let page = app.get("/docs/").await;
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("swagger"), "{html}");
    assert!(
        !html.contains("https://"),
        "the docs page must load nothing from the internet"
    );
}

#[tokio::test]
async fn unknown_routes_and_wrong_methods_answer_in_the_envelope() {
    let b = spawn_with_database(Envelope::B).await;
    let missing = b.get("/nope").await;
    assert_eq!(missing.status(), 404);
    assert_eq!(
        missing.text().await.unwrap(),
        r#"{"success":false,"error":{"code":"NOT_FOUND","message":"Cannot GET /nope"}}"#
    );
    let wrong = b.get("/only-post").await;
    assert_eq!(wrong.status(), 405);
    assert_eq!(wrong.headers()["allow"], "POST");
    assert_eq!(
        wrong.text().await.unwrap(),
        r#"{"success":false,"error":{"code":"METHOD_NOT_ALLOWED","message":"Method Not Allowed"}}"#
    );

    let operator = spawn_with_database(Envelope::Operator).await;
    let missing = operator.get("/nope").await;
    assert_eq!(
        missing.text().await.unwrap(),
        r#"{"statusCode":404,"message":"Cannot GET /nope","error":"Not Found"}"#
    );

    let c = spawn_with_database(Envelope::C).await;
    assert_eq!(
        c.get("/nope").await.text().await.unwrap(),
        r#"{"message":"Cannot GET /nope","statusCode":404}"#
    );

    let a = spawn_with_database(Envelope::A).await;
    assert_eq!(
        a.get("/nope").await.text().await.unwrap(),
        r#"{"status":404,"message":"Cannot GET /nope"}"#
    );
}

/// Another method on an operational route is a 405 with `Allow`, like on every other route;
/// it was a 404 `Cannot TRACE /healthz` (found by `make fuzz-api`).
#[tokio::test]
async fn operational_routes_answer_405_to_other_methods() {
    let app = spawn_with_database(Envelope::A).await;
    for path in ["/healthz", "/readyz", "/metrics"] {
        for method in [reqwest::Method::POST, reqwest::Method::TRACE] {
            let wrong = app
                .client
                .request(method.clone(), format!("{}{path}", app.base))
                .send()
                .await
                .unwrap();
            assert_eq!(wrong.status(), 405, "{method} {path}");
            assert_eq!(wrong.headers()["allow"], "GET", "{method} {path}");
            assert_eq!(
                wrong.text().await.unwrap(),
                r#"{"status":405,"message":"Method Not Allowed"}"#
            );
        }
        assert_eq!(app.get(path).await.status(), 200, "{path}");
    }
}

#[tokio::test]
async fn every_answer_carries_a_request_id() {
    let app = spawn_with_database(Envelope::B).await;
    let one = app.get("/healthz").await.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let two = app.get("/nope").await.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(one.len(), 36);
    assert_ne!(one, two);
}

#[tokio::test]
async fn a_graceful_stop_finishes_the_request_in_flight() {
    let app = spawn_with_database(Envelope::B).await;
    let url = format!("{}/slow", app.base);
    let in_flight = tokio::spawn(async move { reqwest::get(url).await });
    // Stop only once the request is inside the handler: a fixed sleep raced a loaded CI box.
    app.slow_started.notified().await;
    let stopping = app.handle.stop(true);
    let response = in_flight.await.unwrap().unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "finished");
    stopping.await;
    assert!(
        app.client
            .get(format!("{}/healthz", app.base))
            .send()
            .await
            .is_err(),
        "a stopped server still answers"
    );
}

#[tokio::test]
async fn a_body_over_64_kib_is_413_in_the_envelope_and_one_under_passes() {
    let app = spawn_with_database(Envelope::B).await;
    let post = |size: usize| {
        app.client
            .post(format!("{}/echo", app.base))
            .body(vec![b'x'; size])
            .send()
    };
    let small = post(64 * 1024).await.unwrap();
    assert_eq!(small.status(), 200);
    assert_eq!(small.bytes().await.unwrap().len(), 64 * 1024);
    let big = post(64 * 1024 + 1).await.unwrap();
    assert_eq!(big.status(), 413);
    let body: serde_json::Value = big.json().await.unwrap();
    assert_eq!(body["success"], false);
    assert_eq!(body["error"]["code"], "PAYLOAD_TOO_LARGE");
}

#[tokio::test]
async fn nul_characters_are_a_400_in_the_envelope_before_any_handler() {
    let app = spawn_with_database(Envelope::C).await;
    let expected =
        r#"{"message":"Invalid input: text must not contain NUL characters","statusCode":400}"#;
    let in_query = app
        .client
        .post(format!("{}/echo?name=a%00b", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(in_query.status(), 400);
    assert_eq!(in_query.text().await.unwrap(), expected);
    for body in [&br#"{"name":"a\u0000b"}"#[..], b"{\"name\":\"a\0b\"}"] {
        let response = app
            .client
            .post(format!("{}/echo", app.base))
            .body(body.to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400);
        assert_eq!(response.text().await.unwrap(), expected);
    }
    // The text `\u0000` (an escaped backslash) is no NUL, and passes through untouched.
    let text = br#"{"name":"a\\u0000b"}"#.to_vec();
    let response = app
        .client
        .post(format!("{}/echo", app.base))
        .body(text.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.bytes().await.unwrap().to_vec(), text);
}
