//! The door's limits on real binaries: JSON bodies nested too deep on every route that takes
//! a body, slow clients and too many connections through the `HTTP_*` variables.

use std::time::Duration;

use e2e::demo_database;
use serde_json::{Value, json};
use testkit::error_c;

use super::probes::{Expect, Probe, assert_answered};
use super::{operator_token, system};

/// A JSON array nested `levels` deep.
fn nested(levels: usize) -> Value {
    (0..levels).fold(json!(1), |inner, _| json!([inner]))
}

/// 7. A JSON body nested deeper than 32 levels is a 400 in the route's envelope on every
/// route that takes a body, in all four services (every operation with a request body in
/// each service's OpenAPI document, the relayed ones included), before any handler: the
/// routes that resolve their caller first answer it without a token, and through the relay
/// nothing reaches the point service. 32 levels are still read by the route as usual.
#[tokio::test]
async fn a_json_body_nested_too_deep_is_a_400_in_the_routes_envelope_before_any_handler() {
    let sys = system(None).await;
    let message = "Invalid JSON body: nested deeper than 32 levels";
    let s = &sys.stack;
    let mut probes: Vec<Probe> = Vec::new();
    for (service, expected) in [
        (&s.auth, json!({"status": 400, "message": message})),
        (
            &s.points,
            json!({"success": false, "error": {"code": "VALIDATION_ERROR", "message": message}}),
        ),
        // The relayed routes too: the order service reads the body before relaying it.
        (&s.order, error_c(400, message)),
        (
            &s.operator,
            json!({"statusCode": 400, "message": message, "error": "Bad Request"}),
        ),
    ] {
        let document: Value = service.get("/openapi.json").await.json().await.unwrap();
        for (path, item) in document["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                if operation.get("requestBody").is_none() {
                    continue;
                }
                let path: String = path
                    .split('/')
                    .map(|segment| {
                        if segment.starts_with('{') {
                            "1"
                        } else {
                            segment
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("/");
                for levels in [33, 100] {
                    probes.push((
                        method.to_uppercase(),
                        format!("{}{path}", service.base),
                        None,
                        Some(json!({"a": nested(levels - 1)})),
                        Expect::Exactly(400, expected.clone()),
                    ));
                }
            }
        }
    }
    assert!(probes.len() >= 2 * 15, "{} probes", probes.len());
    let relayed_before = posts_served(&sys.stack.points).await;
    assert_answered(&sys, &probes).await;
    // The point service saw the probes sent to it and none of those sent to the relay.
    let direct = probes
        .iter()
        .filter(|(method, url, ..)| method == "POST" && url.starts_with(&s.points.base))
        .count() as u64;
    assert_eq!(
        posts_served(&sys.stack.points).await,
        relayed_before + direct,
        "nothing was relayed"
    );

    // The handlers run when the body is shallow enough: the caller comes first.
    let url = sys.order("/api/v2/client/point-orders");
    let (status, answer) = sys
        .call("POST", &url, None, Some(&json!({"a": nested(31)})))
        .await;
    assert_eq!(status, 401, "{answer}");
    let (status, answer) = sys
        .call("POST", &url, None, Some(&json!({"a": nested(32)})))
        .await;
    assert_eq!((status, answer), (400, error_c(400, message)));
    let (status, answer) = sys
        .call(
            "PATCH",
            &sys.operator("/services/1"),
            Some(&operator_token("admin", 1)),
            Some(&json!({"logo_variants": nested(31)})),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
}

/// How many POST requests a service has answered (its `http_requests_total`).
async fn posts_served(service: &e2e::Service) -> u64 {
    let text = service.get("/metrics").await.text().await.unwrap();
    text.lines()
        .filter(|l| l.starts_with("http_requests_total{") && l.contains(r#"method="POST""#))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum()
}

/// Reads from `stream` until the server closes it; `None` if it is still open after `wait`.
async fn read_until_closed(stream: &mut tokio::net::TcpStream, wait: Duration) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut answer = Vec::new();
    tokio::time::timeout(wait, stream.read_to_end(&mut answer))
        .await
        .ok()?
        .ok()?;
    Some(String::from_utf8_lossy(&answer).into_owned())
}

/// The operator service's settings in the next test (`HTTP_HEAD_TIMEOUT_MS`,
/// `HTTP_BODY_TIMEOUT_MS`).
const HEAD_DEADLINE: Duration = Duration::from_secs(3);
const BODY_DEADLINE: Duration = Duration::from_millis(300);

/// 8. Slow clients and too many connections, on a real binary through the `HTTP_*`
/// variables: the operator service started with room for two connections, a 3 s head
/// deadline, a 300 ms body deadline and a 2 s keep-alive (above its callers' 1 s idle time, as
/// it must be: `server::config::HttpLimits::stop_problems`). Two connections that never finish
/// their head hold both places, so a third waits in the accept queue, unanswered, until one
/// of them goes; a head trickled one header at a time is cut at 3 s (408); a body declared
/// and never sent is a 408 in the operator envelope at 300 ms, with the connection closed;
/// an idle keep-alive connection is closed after 2 s.
///
/// Whether the server took a connection or leaves it waiting is read from the kernel
/// (`e2e::sockets`), not guessed from a pause.
#[tokio::test]
async fn slow_clients_and_connections_past_the_bound_are_cut_by_the_http_variables() {
    use e2e::sockets::wait_for_port;
    use std::time::Instant;
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpStream;
    let catalog = demo_database(&["order-service", "operator-service"], "sec_limits").await;
    let head_ms = HEAD_DEADLINE.as_millis().to_string();
    let body_ms = BODY_DEADLINE.as_millis().to_string();
    let service = e2e::Service::start(
        "operator-service",
        catalog.url(),
        &[
            ("HTTP_MAX_CONNECTIONS", "2"),
            ("HTTP_HEAD_TIMEOUT_MS", &head_ms),
            ("HTTP_BODY_TIMEOUT_MS", &body_ms),
            ("HTTP_KEEP_ALIVE_SECS", "2"),
            ("HTTP_CALLER_IDLE_SECS", "1"),
        ],
    )
    .await;
    let address = service.base.trim_start_matches("http://").to_owned();
    let port = service.port();
    // The harness's own keep-alive connection (from waiting for /healthz) goes after 2 s:
    // wait until the server holds no connection.
    wait_for_port(port, "free of connections", |s| s.established == 0).await;

    let held_since = Instant::now();
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(&address).await.unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\n")
            .await
            .unwrap();
        held.push(stream);
    }
    // Both taken by the server: they hold its two places.
    wait_for_port(port, "holding two accepted connections", |s| {
        s.accepted() == 2 && s.queued == 0
    })
    .await;
    let mut third = TcpStream::connect(&address).await.unwrap();
    third
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    // The third is left in the accept queue: no place for it ...
    wait_for_port(
        port,
        "with the third connection left in its accept queue",
        |s| s.accepted() == 2 && s.queued == 1,
    )
    .await;
    // ... and stays unanswered while the two hold their places, that is until well before
    // their head deadline cuts them: counted from their accept (after `held_since`) on the
    // server's coarse clock (actix's, which runs up to half a second behind).
    let window = HEAD_DEADLINE
        .saturating_sub(held_since.elapsed())
        .saturating_sub(Duration::from_secs(1))
        .min(Duration::from_millis(800));
    assert_eq!(
        read_until_closed(&mut third, window).await,
        None,
        "answered while two connections held both places"
    );
    drop(held.pop());
    let answer = read_until_closed(&mut third, Duration::from_secs(15))
        .await
        .expect("served once a place is free");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");

    // The other held connection never finished its head: 408 and closed at the head
    // deadline, counted from its connect, even while it trickles headers.
    let mut slow = held.pop().unwrap();
    let trickled = tokio::time::timeout(HEAD_DEADLINE + Duration::from_secs(10), async {
        let mut answer = Vec::new();
        loop {
            if slow.write_all(b"X-Slow: 1\r\n").await.is_err() {
                break;
            }
            let mut chunk = [0u8; 1024];
            match tokio::time::timeout(
                Duration::from_millis(100),
                tokio::io::AsyncReadExt::read(&mut slow, &mut chunk),
            )
            .await
            {
                Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(n)) => answer.extend_from_slice(&chunk[..n]),
                Err(_) => {}
            }
        }
        String::from_utf8_lossy(&answer).into_owned()
    })
    .await
    .expect("a trickled head is cut at the head deadline");
    assert!(trickled.starts_with("HTTP/1.1 408"), "{trickled:?}");
    // By the head deadline, not by a shorter one (the body's, the keep-alive): at least
    // half of it, whatever the server's coarse clock.
    assert!(
        held_since.elapsed() >= HEAD_DEADLINE / 2,
        "cut after {:?}, well before the head deadline",
        held_since.elapsed()
    );

    // A body declared and never sent: 408 in the operator envelope, connection closed, at
    // the body deadline (not the head's, which is later).
    let mut stalled = TcpStream::connect(&address).await.unwrap();
    let started = Instant::now();
    stalled
        .write_all(
            b"POST /api/v1/operator/services HTTP/1.1\r\nHost: x\r\n\
              Content-Type: application/json\r\nContent-Length: 50\r\n\r\n{\"title\": ",
        )
        .await
        .unwrap();
    let answer = read_until_closed(&mut stalled, Duration::from_secs(15))
        .await
        .expect("closed after the body deadline");
    let took = started.elapsed();
    assert!(
        took >= BODY_DEADLINE && took < HEAD_DEADLINE,
        "cut after {took:?}"
    );
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 408"), "{head}");
    assert_eq!(
        serde_json::from_str::<Value>(body).unwrap(),
        json!({
            "statusCode": 408,
            "message": "Request Timeout: the request body did not arrive in time",
            "error": "Request Timeout",
        })
    );

    // An idle keep-alive connection is closed after 2 s.
    let mut idle = TcpStream::connect(&address).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    let answer = read_until_closed(&mut idle, Duration::from_secs(15))
        .await
        .expect("closed after the keep-alive");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    assert!(started.elapsed() >= Duration::from_millis(1800));
}
