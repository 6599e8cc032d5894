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

/// 8. Slow clients and too many connections, on a real binary through the `HTTP_*`
/// variables: the operator service started with room for two connections, a 2 s head
/// deadline, a 300 ms body deadline and a 1 s keep-alive. Two connections that never finish
/// their head hold both places, so a third request waits unanswered until one of them goes;
/// a head trickled one header at a time is cut at 2 s (408); a body declared and never sent
/// is a 408 in the operator envelope at 300 ms, with the connection closed; an idle
/// keep-alive connection is closed after 1 s.
#[tokio::test]
async fn slow_clients_and_connections_past_the_bound_are_cut_by_the_http_variables() {
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpStream;
    let catalog = demo_database(&["order-service", "operator-service"], "sec_limits").await;
    let service = e2e::Service::start(
        "operator-service",
        catalog.url(),
        &[
            ("HTTP_MAX_CONNECTIONS", "2"),
            ("HTTP_HEAD_TIMEOUT_MS", "2000"),
            ("HTTP_BODY_TIMEOUT_MS", "300"),
            ("HTTP_KEEP_ALIVE_SECS", "1"),
        ],
    )
    .await;
    let address = service.base.trim_start_matches("http://").to_owned();
    // The harness's own keep-alive connection (from waiting for /healthz) goes after 1 s.
    tokio::time::sleep(Duration::from_millis(1500)).await;

    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(&address).await.unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\n")
            .await
            .unwrap();
        held.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut third = TcpStream::connect(&address).await.unwrap();
    third
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(
        read_until_closed(&mut third, Duration::from_millis(800)).await,
        None,
        "answered while two connections held both places"
    );
    drop(held.pop());
    let answer = read_until_closed(&mut third, Duration::from_secs(5))
        .await
        .expect("served once a place is free");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");

    // The other held connection never finished its head: 408 and closed at 2 s, counted
    // from its connect (about 1 s ago), even while it trickles headers.
    let mut slow = held.pop().unwrap();
    let trickled = tokio::time::timeout(Duration::from_secs(4), async {
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

    // A body declared and never sent: 408 in the operator envelope, connection closed.
    let mut stalled = TcpStream::connect(&address).await.unwrap();
    let started = std::time::Instant::now();
    stalled
        .write_all(
            b"POST /api/v1/operator/services HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{\"title\": ",
        )
        .await
        .unwrap();
    let answer = read_until_closed(&mut stalled, Duration::from_secs(4))
        .await
        .expect("closed after the body deadline");
    assert!(started.elapsed() < Duration::from_secs(3));
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 408"), "{head}");
    assert_eq!(
        serde_json::from_str::<Value>(body).unwrap(),
        json!({"statusCode": 408, "message": "Request Timeout: the request body did not arrive in time", "error": "Request Timeout"})
    );

    // An idle keep-alive connection is closed after 1 s.
    let mut idle = TcpStream::connect(&address).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let answer = read_until_closed(&mut idle, Duration::from_secs(4))
        .await
        .expect("closed after the keep-alive");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    assert!(started.elapsed() >= Duration::from_millis(800));
}
