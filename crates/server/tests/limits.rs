//! The abuse limits of the shared server and app, over real sockets written by hand: the
//! JSON depth bound, the slow-client deadlines (request head, body, idle keep-alive) and
//! the bound on open connections (`docs/decisions.md`, "Abuse limits").

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use actix_web::{HttpResponse, web};
use envelope::Envelope;
use serde_json::{Value, json};
use server::{AppSettings, HttpLimits};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct TestServer {
    base: String,
    address: String,
    /// How many requests reached a handler of the test routes.
    handled: Arc<AtomicUsize>,
    handle: actix_web::dev::ServerHandle,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let handle = self.handle.clone();
        tokio::spawn(async move { handle.stop(false).await });
    }
}

/// One worker with `limits`, the shared app in `envelope`, and two routes that count their
/// calls: `/echo` answers the raw body, `/json` a body read by actix's JSON extractor.
fn spawn(envelope: Envelope, limits: HttpLimits) -> TestServer {
    // The pool connects lazily; nothing here reaches the database.
    let pool = db::build_pool(&db::PoolSettings::new(
        "postgres://nobody@127.0.0.1:9/none",
        2,
    ))
    .unwrap();
    let settings = AppSettings {
        service: "test-service",
        envelope,
        show_internals: false,
        pool,
        openapi: server::ops::openapi().into(),
        http: limits,
    };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let handled = Arc::new(AtomicUsize::new(0));
    let counter = web::Data::from(handled.clone());
    let server = server::http_server_with(listener, 1, limits, move || {
        server::app(settings.clone())
            .app_data(counter.clone())
            .route(
                "/echo",
                web::post().to(|n: web::Data<AtomicUsize>, body: web::Bytes| async move {
                    n.fetch_add(1, Ordering::SeqCst);
                    HttpResponse::Ok().body(body)
                }),
            )
            .route(
                "/json",
                web::post().to(
                    |n: web::Data<AtomicUsize>, body: web::Json<Value>| async move {
                        n.fetch_add(1, Ordering::SeqCst);
                        HttpResponse::Ok().json(body.into_inner())
                    },
                ),
            )
    })
    .unwrap();
    let handle = server.handle();
    tokio::spawn(server);
    TestServer {
        base: format!("http://{address}"),
        address,
        handled,
        handle,
    }
}

fn nested(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

/// A JSON body nested deeper than 32 levels is a 400 in the app's envelope, before any
/// handler: well under serde_json's own limit (128), which is never what a client meets.
#[tokio::test]
async fn a_json_body_nested_deeper_than_32_levels_is_400_in_the_envelope_before_any_handler() {
    let client = reqwest::Client::new();
    for (envelope, shape) in [
        (
            Envelope::A,
            json!({"status": 400, "message": envelope::depth::MESSAGE}),
        ),
        (
            Envelope::B,
            json!({"success": false, "error": {"code": "VALIDATION_ERROR", "message": envelope::depth::MESSAGE}}),
        ),
        (
            Envelope::C,
            json!({"message": envelope::depth::MESSAGE, "statusCode": 400}),
        ),
        (
            Envelope::Operator,
            json!({"statusCode": 400, "message": envelope::depth::MESSAGE, "error": "Bad Request"}),
        ),
    ] {
        let app = spawn(envelope, HttpLimits::default());
        let post = |path: &str, body: String| {
            client
                .post(format!("{}{path}", app.base))
                .header("Content-Type", "application/json")
                .body(body)
                .send()
        };
        for (path, levels) in [("/echo", 33), ("/json", 33), ("/echo", 100), ("/json", 200)] {
            let answer = post(path, nested(levels)).await.unwrap();
            assert_eq!(answer.status(), 400, "{envelope:?} {path} {levels}");
            let mut body: Value = answer.json().await.unwrap();
            if let Some(object) = body.as_object_mut() {
                object.remove("stack");
            }
            assert_eq!(body, shape, "{envelope:?} {path} {levels}");
        }
        // Deep inside an object too, under a documented-looking body.
        let deep = format!(r#"{{"point_offer_id": "x", "extra": {}}}"#, nested(32));
        let answer = post("/json", deep).await.unwrap();
        assert_eq!(answer.status(), 400);
        assert_eq!(
            app.handled.load(Ordering::SeqCst),
            0,
            "{envelope:?}: no handler ran"
        );

        // 32 levels pass, and brackets inside strings are text.
        let answer = post("/json", nested(32)).await.unwrap();
        assert_eq!(answer.status(), 200);
        let text = json!({"title": "[".repeat(1000), "logo_variants": {"a": [{"b": 1}]}});
        let answer = post("/json", text.to_string()).await.unwrap();
        assert_eq!(answer.status(), 200);
        assert_eq!(answer.json::<Value>().await.unwrap(), text);
        let escaped = format!(r#"["\"{}", "\\"]"#, "{".repeat(100));
        let answer = post("/echo", escaped.clone()).await.unwrap();
        assert_eq!(answer.status(), 200);
        assert_eq!(answer.text().await.unwrap(), escaped);
        assert_eq!(app.handled.load(Ordering::SeqCst), 3);
    }
}

fn limits(change: impl FnOnce(&mut HttpLimits)) -> HttpLimits {
    let mut limits = HttpLimits::default();
    change(&mut limits);
    limits
}

/// Everything the server sends until it closes the connection, or `None` if it is still
/// open after `wait`.
async fn read_until_closed(stream: &mut TcpStream, wait: Duration) -> Option<String> {
    let mut answer = Vec::new();
    tokio::time::timeout(wait, stream.read_to_end(&mut answer))
        .await
        .ok()?
        .ok()?;
    Some(String::from_utf8_lossy(&answer).into_owned())
}

/// One whole answer with a `Content-Length` body, read from a connection that stays open.
async fn read_answer(stream: &mut TcpStream) -> (String, String) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&buffer).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length: usize = head
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse().unwrap())
                })
                .expect("a Content-Length");
            if body.len() >= length {
                return (head.to_owned(), body[..length].to_owned());
            }
        }
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "closed before a whole answer: {text:?}");
        buffer.extend_from_slice(&chunk[..n]);
    }
}

/// A client that trickles the head of its first request, one header every 100 ms, is
/// answered 408 and closed at the head timeout (actix's `client_request_timeout`).
#[tokio::test]
async fn a_request_head_trickled_past_the_head_timeout_is_408_and_closed() {
    let app = spawn(
        Envelope::C,
        limits(|l| l.head_timeout = Duration::from_millis(300)),
    );
    let stream = TcpStream::connect(&app.address).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let started = Instant::now();
    writer
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let trickle = tokio::spawn(async move {
        for i in 0.. {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if writer
                .write_all(format!("X-Slow-{i}: 1\r\n").as_bytes())
                .await
                .is_err()
            {
                return i;
            }
        }
        unreachable!()
    });
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(3), reader.read_to_end(&mut answer))
        .await
        .expect("the connection is closed at the head timeout, not held")
        .ok();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    trickle.abort();
}

/// A request whose body is declared and never finished (`Content-Length` or chunked) is a
/// 408 in the route's envelope at the body's read deadline, no handler runs, and the
/// connection is closed rather than kept waiting for the rest.
#[tokio::test]
async fn a_body_that_never_finishes_is_408_in_the_envelope_and_closed() {
    let app = spawn(
        Envelope::B,
        limits(|l| l.body_timeout = Duration::from_millis(300)),
    );
    for head in [
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: 100\r\n\r\n{\"a\": ",
        "POST /json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\n\r\n6\r\n{\"a\": \r\n",
    ] {
        let mut stream = TcpStream::connect(&app.address).await.unwrap();
        let started = Instant::now();
        stream.write_all(head.as_bytes()).await.unwrap();
        // 300 ms, then up to HTTP_DISCONNECT_TIMEOUT_MS (1 s) of lingering before the close.
        let answer = read_until_closed(&mut stream, Duration::from_secs(5))
            .await
            .unwrap_or_else(|| panic!("the connection is still held after 5 s: {head:?}"));
        assert!(started.elapsed() < Duration::from_secs(3), "{head:?}");
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer:?}");
        assert!(
            answer.to_ascii_lowercase().contains("connection: close"),
            "{answer:?}"
        );
        let body: Value = serde_json::from_str(answer.split_once("\r\n\r\n").unwrap().1).unwrap();
        assert_eq!(
            body,
            json!({"success": false, "error": {
                "code": "REQUEST_TIMEOUT",
                "message": envelope::body_limits::BODY_TIMEOUT_MESSAGE,
            }})
        );
    }
    assert_eq!(app.handled.load(Ordering::SeqCst), 0);

    // A body that arrives in slow pieces but within the deadline is read as usual.
    let mut stream = TcpStream::connect(&app.address).await.unwrap();
    stream
        .write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n[1")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    stream.write_all(b"0]").await.unwrap();
    let (head, body) = read_answer(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(body, "[10]");
}

/// An idle keep-alive connection is closed once `keep_alive` has passed.
#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_after_the_keep_alive() {
    let app = spawn(
        Envelope::A,
        limits(|l| l.keep_alive = Duration::from_secs(1)),
    );
    let mut stream = TcpStream::connect(&app.address).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let (head, _) = read_answer(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let idle = Instant::now();
    let rest = read_until_closed(&mut stream, Duration::from_secs(4))
        .await
        .expect("closed after the keep-alive");
    assert_eq!(rest, "");
    let waited = idle.elapsed();
    assert!(
        waited >= Duration::from_millis(800) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
}

/// The bound on open connections holds: with one worker and `max_connections = 2`, two
/// idle keep-alive connections leave a third request unanswered (it waits in the listen
/// backlog) until one of them closes; then it is served.
#[tokio::test]
async fn a_connection_past_the_bound_waits_until_another_closes() {
    let app = spawn(
        Envelope::C,
        limits(|l| {
            l.max_connections = 2;
            l.keep_alive = Duration::from_secs(60);
            l.head_timeout = Duration::from_secs(30);
        }),
    );
    let request = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(&app.address).await.unwrap();
        stream.write_all(request).await.unwrap();
        let (head, _) = read_answer(&mut stream).await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        held.push(stream);
    }

    // The kernel completes the handshake (backlog), but nobody accepts the connection.
    let mut third = TcpStream::connect(&app.address).await.unwrap();
    third.write_all(request).await.unwrap();
    let mut byte = [0u8; 1];
    let early = tokio::time::timeout(Duration::from_secs(1), third.read(&mut byte)).await;
    assert!(
        early.is_err(),
        "the third connection was answered while two were held"
    );

    drop(held.pop());
    let served = Instant::now();
    let (head, body) = tokio::time::timeout(Duration::from_secs(5), read_answer(&mut third))
        .await
        .expect("the third request is served once a connection closes");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"status": "ok"})
    );
    assert!(served.elapsed() < Duration::from_secs(3));
}
