//! Every log line written while serving a request carries that request's id, the same id
//! the answer's `X-Request-Id` header gives.

use db::testing::TestDatabase;
use e2e::Service;
use e2e::log::has_message;

#[tokio::test]
async fn a_requests_log_lines_carry_its_request_id() {
    let database = TestDatabase::empty("logging").await;
    let service = Service::start("point-service", database.url(), &[("RUST_LOG", "debug")]).await;
    let response = service
        .client()
        .get(format!("{}/no/such/route?code=1234", service.base))
        .header(
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        )
        .header("x-request-id", "the-callers-id")
        .send()
        .await
        .unwrap();
    let request_id = request_id(&response);
    assert_eq!(response.status(), 404);

    // The refusal is logged inside the request's span.
    let lines = lines_saying(&service, "request refused").await;
    assert!(
        !lines.is_empty(),
        "no log line for the refused request:\n{}",
        service.logs().join("\n")
    );
    for line in lines {
        let root = &line["spans"][0];
        assert_eq!(root["name"], "HTTP request", "{line}");
        assert_eq!(root["request_id"], request_id.as_str(), "{line}");
        assert_eq!(root["http.method"], "GET", "{line}");
        assert_eq!(root["http.route"], "default", "{line}");
        assert_eq!(root["http.target"], "/no/such/route", "{line}");
        assert_eq!(
            root["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736",
            "{line}"
        );
        assert_eq!(root["caller_request_id"], "the-callers-id", "{line}");
    }
}

/// The lines of `service` whose message is `message`: waited for until there is one, then
/// all of them among the lines written so far (read off the pipes first).
async fn lines_saying(service: &Service, message: &str) -> Vec<serde_json::Value> {
    service.log().wait_for_message(message).await;
    service
        .log()
        .written()
        .await
        .iter()
        .filter(|line| has_message(line, message))
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// An order service whose relay calls `upstream` and gives up after 300 ms (no auth service).
async fn relaying_to(upstream: &str, database: &TestDatabase) -> Service {
    Service::start(
        "order-service",
        database.url(),
        &[
            ("POINT_SERVICE_URL", upstream),
            ("AUTH_SERVICE_URL", "http://127.0.0.1:9"),
            ("POINT_SERVICE_TIMEOUT_MS", "300"),
        ],
    )
    .await
}

/// The id the service gave `response`'s request.
fn request_id(response: &reqwest::Response) -> String {
    response.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned()
}

/// A line logged while an answer's body streams, after the handler has returned, still
/// carries its request: a relayed answer whose body stops half way is cut at the relay's
/// wait, and the order service's warning names the request id of that answer.
#[tokio::test]
async fn a_line_logged_while_the_answer_streams_carries_its_request_id() {
    // A point service that sends the head and part of the body, then nothing more.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buffer = [0_u8; 4096];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let read = stream.read(&mut buffer).await.unwrap();
            assert!(read > 0, "the relay closed before sending its request");
            request.extend_from_slice(&buffer[..read]);
        }
        stream
            .write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"points\":",
            )
            .await
            .unwrap();
        // Hold the connection open, sending nothing, until the test ends.
        let _ = stopped.await;
    });
    let database = TestDatabase::empty("logging_stream").await;
    let order = relaying_to(&upstream, &database).await;

    let response = order.get("/api/v2/client/points").await;
    assert_eq!(response.status(), 200);
    let request_id = request_id(&response);
    assert!(
        response.bytes().await.is_err(),
        "a body cut short is not a whole answer"
    );

    let lines = lines_saying(&order, "relayed answer cut at the relay's deadline").await;
    assert_eq!(lines.len(), 1, "{}", order.logs().join("\n"));
    let root = &lines[0]["spans"][0];
    assert_eq!(root["request_id"], request_id.as_str(), "{}", lines[0]);
    assert_eq!(root["http.route"], "/api/v2/client/points", "{}", lines[0]);
    drop(stop);
}

/// The relay's own failures are logged inside their request: a point service that refuses
/// the connection (502) and one that never answers (504) each give an error line whose
/// fields name the request the app was answered for.
#[tokio::test]
async fn the_relays_failures_are_logged_with_their_request() {
    // A port nothing listens on: bound, then let go.
    let closed = {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    // A point service that takes the connection and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let (_stream, _) = silent.accept().await.unwrap();
        let _ = stopped.await;
    });

    for (upstream, status, message) in [
        (closed, 502, "relay could not reach the point service"),
        (silent_url, 504, "relay timed out; outcome unknown"),
    ] {
        let database = TestDatabase::empty("logging_relay").await;
        let order = relaying_to(&upstream, &database).await;
        let response = order.get("/api/v2/client/points?page=2").await;
        assert_eq!(response.status(), status, "{message}");
        let request_id = request_id(&response);

        let lines = lines_saying(&order, message).await;
        assert_eq!(lines.len(), 1, "{}", order.logs().join("\n"));
        let line = &lines[0];
        assert_eq!(line["level"], "ERROR", "{line}");
        assert_eq!(line["upstream"], "point-service", "{line}");
        let root = &line["spans"][0];
        assert_eq!(root["request_id"], request_id.as_str(), "{line}");
        assert_eq!(root["http.route"], "/api/v2/client/points", "{line}");
        assert_eq!(root["http.target"], "/api/v2/client/points", "{line}");
        assert_eq!(line["spans"].as_array().map(Vec::len), Some(1), "{line}");
    }
    drop(stop);
}
