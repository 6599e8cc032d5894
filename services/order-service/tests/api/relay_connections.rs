//! The relay's connections to the point service (`relay::connections`): kept open between
//! requests, and never used again once one may be in a bad state: idle for longer than
//! `HTTP_CALLER_IDLE_SECS`, closed by the point service, or left with an answer not read
//! whole. Each test runs the app with one worker, so that every request of the test uses
//! the same worker's connections.

use std::io::{Read, Write};
use std::time::Duration;

use crate::helpers::*;
use crate::upstream::{RawUpstream, write_answer};

/// The answer the stand-in writes for `?n=<kind>`.
fn answer(target: &[u8], stream: &mut std::net::TcpStream) {
    let target = String::from_utf8_lossy(target);
    match target.rsplit("n=").next().unwrap() {
        "json" => write_answer(stream, 200, Some("application/json"), br#"{"n":1}"#),
        "no-content" => write_answer(stream, 204, None, b""),
        "empty" => write_answer(stream, 200, Some("text/plain"), b""),
        "chunked" => {
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n\
                  5\r\nhello\r\n0\r\n\r\n",
            );
        }
        "close" => {
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
        other => panic!("no answer for {other}"),
    }
}

async fn app_with(upstream: &RawUpstream, options: Options) -> TestApp {
    spawn_app_with(Options {
        point_service_url: Some(upstream.url.clone()),
        workers: 1,
        ..options
    })
    .await
}

/// Waits until the relay has closed its one connection to `upstream` (`what` names it if not).
async fn wait_until_closed(upstream: &RawUpstream, what: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while upstream.ended() < 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} is still open after 30 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The relayed answer's status and body for `?n=<kind>`.
async fn get(app: &TestApp, kind: &str) -> (u16, String) {
    let answer = app
        .client
        .get(app.url(&format!("/api/v2/client/points?n={kind}")))
        .bearer_auth(token(1001))
        .send()
        .await
        .unwrap();
    (answer.status().as_u16(), answer.text().await.unwrap())
}

#[tokio::test]
async fn answers_one_after_another_share_one_connection_whatever_their_framing() {
    let upstream = RawUpstream::start(|_, target, stream| answer(target, stream));
    let app = app_with(&upstream, Options::default()).await;
    for _ in 0..3 {
        assert_eq!(get(&app, "json").await, (200, r#"{"n":1}"#.to_owned()));
        assert_eq!(get(&app, "no-content").await, (204, String::new()));
        assert_eq!(get(&app, "empty").await, (200, String::new()));
        assert_eq!(get(&app, "chunked").await, (200, "hello".to_owned()));
    }
    assert_eq!(upstream.seen().len(), 12);
    assert_eq!(upstream.connections(), 1);
}

#[tokio::test]
async fn a_connection_idle_for_longer_than_the_callers_idle_time_is_not_used_again() {
    let upstream = RawUpstream::start(|_, target, stream| answer(target, stream));
    let idle = Duration::from_secs(1);
    let app = app_with(
        &upstream,
        Options {
            caller_idle: idle,
            ..Options::default()
        },
    )
    .await;
    assert_eq!(get(&app, "json").await.0, 200);
    assert_eq!(get(&app, "json").await.0, 200);
    assert_eq!(upstream.connections(), 1);
    // Past the idle time whatever the clock's resolution: the rule, not a race.
    tokio::time::sleep(idle + Duration::from_millis(100)).await;
    assert_eq!(get(&app, "json").await.0, 200);
    assert_eq!(upstream.connections(), 2);
    assert_eq!(get(&app, "json").await.0, 200);
    assert_eq!(upstream.connections(), 2);
}

#[tokio::test]
async fn a_connection_idle_for_longer_than_the_callers_idle_time_is_closed_with_no_request_to_see_it()
 {
    // A stopping point service ends its drain early once its callers have closed their
    // idle connections ("Lossless rollouts"); this stand-in never closes one itself.
    let upstream = RawUpstream::start(|_, target, stream| answer(target, stream));
    let app = app_with(
        &upstream,
        Options {
            caller_idle: Duration::from_secs(1),
            ..Options::default()
        },
    )
    .await;
    assert_eq!(get(&app, "json").await.0, 200);
    wait_until_closed(&upstream, "the idle connection").await;
    assert_eq!(upstream.connections(), 1);
}

#[tokio::test]
async fn after_an_answer_that_closes_its_connection_the_next_request_opens_another() {
    let upstream = RawUpstream::start(|_, target, stream| answer(target, stream));
    let app = app_with(&upstream, Options::default()).await;
    assert_eq!(get(&app, "close").await, (200, "ok".to_owned()));
    assert_eq!(get(&app, "json").await.0, 200);
    assert_eq!(upstream.connections(), 2);
}

#[tokio::test]
async fn a_connection_whose_answer_broke_off_is_closed_not_used_again() {
    // Half of a 10-byte body, then nothing until the relay closes the connection.
    let upstream = RawUpstream::start(|_, target, stream| {
        if !target.ends_with(b"n=stall") {
            return answer(target, stream);
        }
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello");
        let mut rest = [0u8; 64];
        while matches!(stream.read(&mut rest), Ok(n) if n > 0) {}
    });
    let app = app_with(
        &upstream,
        Options {
            relay_timeout: Duration::from_secs(1),
            ..Options::default()
        },
    )
    .await;
    let stalled = app
        .client
        .get(app.url("/api/v2/client/points?n=stall"))
        .bearer_auth(token(1001))
        .send()
        .await
        .unwrap();
    assert_eq!(stalled.status().as_u16(), 200);
    // The relay's deadline cuts the answer short: the app never gets a whole body.
    assert!(stalled.bytes().await.is_err());
    wait_until_closed(&upstream, "the broken-off connection").await;
    assert_eq!(get(&app, "json").await.0, 200);
    assert_eq!(upstream.connections(), 2);
}
