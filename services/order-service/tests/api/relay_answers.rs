//! Every answer of the point service reaches the app as it left: status, Content-Type (or
//! none) and body bytes, whatever the status and content type; the order service's own
//! error handling (its envelope-C rewriting of non-JSON errors) never touches it.

use std::io::Write;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use crate::helpers::*;
use crate::upstream::{RawUpstream, write_answer};

const STATUSES: [u16; 19] = [
    200, 201, 202, 204, 207, 400, 401, 403, 404, 405, 409, 413, 418, 422, 429, 500, 502, 503, 504,
];
const CONTENT_TYPES: [Option<&str>; 6] = [
    Some("application/problem+json"),
    Some("text/plain; charset=utf-8"),
    None,
    Some("application/json"),
    Some("text/html"),
    Some("application/octet-stream"),
];
const BODIES: [&[u8]; 4] = [
    b"",
    b"plain words, not JSON",
    br#"{"success":false,"error":{"code":"X","message":"y"}}"#,
    &[0xff, 0xfe, 0x00, b'{', 0x80],
];

/// The answer case `n`: every status with every content type and every body (204 none).
fn case(n: usize) -> (u16, Option<&'static str>, &'static [u8]) {
    let status = STATUSES[n % STATUSES.len()];
    let content_type = CONTENT_TYPES[(n / STATUSES.len()) % CONTENT_TYPES.len()];
    let body = BODIES[n / (STATUSES.len() * CONTENT_TYPES.len())];
    (status, content_type, if status == 204 { b"" } else { body })
}

const CASES: usize = STATUSES.len() * CONTENT_TYPES.len() * BODIES.len();

#[tokio::test]
async fn every_status_content_type_and_body_of_the_point_service_comes_back_unchanged() {
    let upstream = RawUpstream::start(|_, target, stream| {
        let target = String::from_utf8_lossy(target);
        let n: usize = target.rsplit("case=").next().unwrap().parse().unwrap();
        let (status, content_type, body) = case(n);
        write_answer(stream, status, content_type, body);
    });
    let app = spawn_app_with(Options {
        point_service_url: Some(upstream.url.clone()),
        ..Options::default()
    })
    .await;
    for n in 0..CASES {
        let (status, content_type, body) = case(n);
        // A relayed GET and a relayed POST route, with and without a token.
        let request = if n % 2 == 0 {
            app.client
                .get(app.url(&format!("/api/v2/client/points?case={n}")))
                .bearer_auth(token(1001))
        } else {
            app.client.post(app.url(&format!(
                "/api/v2/client/point-orders/0f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11/pay/card?case={n}"
            )))
        };
        let response = request.send().await.unwrap();
        let got_status = response.status().as_u16();
        let got_type = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_owned());
        let got_body = response.bytes().await.unwrap();
        let what = format!("case {n}: {status} {content_type:?} {body:?}");
        assert_eq!(got_status, status, "{what}");
        assert_eq!(got_type.as_deref(), content_type, "{what}");
        assert_eq!(&got_body[..], body, "{what}");
    }
}

#[tokio::test]
async fn a_streamed_answer_is_passed_on_as_it_arrives() {
    // The upstream sends its first chunk, then waits until the test has read that chunk
    // through the relay before it sends the rest: a relay that waited for the whole body
    // would never show the first chunk, and the test would hang instead of passing.
    let (first_read, wait_for_read) = mpsc::channel::<()>();
    let wait_for_read = Arc::new(Mutex::new(wait_for_read));
    let upstream = RawUpstream::start(move |_, _, stream| {
        let _ = stream.write_all(
            b"HTTP/1.1 409 Conflict\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nfirst \r\n",
        );
        let _ = stream.flush();
        let _ = wait_for_read.lock().unwrap().recv();
        let _ = stream.write_all(b"4\r\nlast\r\n0\r\n\r\n");
    });
    let app = spawn_app_with(Options {
        point_service_url: Some(upstream.url.clone()),
        ..Options::default()
    })
    .await;
    let mut response = app
        .client
        .get(app.url("/api/v2/client/point-history"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 409);
    assert_eq!(response.headers()["content-type"], "text/plain");
    let mut body = response.chunk().await.unwrap().unwrap().to_vec();
    assert_eq!(body, b"first ");
    first_read.send(()).unwrap();
    while let Some(chunk) = response.chunk().await.unwrap() {
        body.extend_from_slice(&chunk);
    }
    assert_eq!(body, b"first last");
}

/// The point service read the order and went away before answering (a crash between the two):
/// the relay cannot know whether the order was made, so it sends nothing again, answers the
/// spec's 502, and counts the call as one that met a closing connection.
#[tokio::test]
async fn an_order_read_by_a_point_service_that_then_went_away_is_not_sent_again() {
    let upstream = RawUpstream::start(|_, _, stream| {
        let _ = stream.shutdown(std::net::Shutdown::Both);
    });
    let app = spawn_app_with(Options {
        point_service_url: Some(upstream.url.clone()),
        ..Options::default()
    })
    .await;
    let response = app
        .client
        .post(app.url("/api/v2/client/point-orders"))
        .header("content-type", "application/json")
        .body(r#"{"point_offer_id":"65f0a1b2c3d4e5f6a7b8c9d0","to_client_id":1002,"payment_type":"point"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 502);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "POINT_SERVICE_UNAVAILABLE");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("connection closed before message completed"),
        "{body}"
    );
    assert_eq!(upstream.seen().len(), 1, "the order was sent again");
    let metrics = app
        .client
        .get(app.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains(
            r#"http_client_closed_connections_total{callee="127.0.0.1",outcome="failed"} 1"#
        ),
        "{metrics}"
    );
}
