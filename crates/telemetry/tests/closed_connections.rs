//! A call whose connection closes after the callee read it, before any answer: resent once
//! when its caller marked it resendable (sending it twice does what sending it once does),
//! never otherwise, whatever its method; counted either way (`telemetry::closed_connections`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use telemetry::closed_connections::Resendable;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// A callee that reads each request whole and counts it; the first `gone` it reads it drops
/// without an answer (it processed the request and went away), every later one it answers 200.
async fn callee_that_goes_away(gone: usize) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let read = Arc::new(AtomicUsize::new(0));
    let counted = read.clone();
    tokio::spawn(async move {
        loop {
            let (socket, _) = listener.accept().await.unwrap();
            let counted = counted.clone();
            tokio::spawn(async move {
                let mut conn = BufReader::new(socket);
                loop {
                    let mut length = 0usize;
                    loop {
                        let mut line = String::new();
                        if conn.read_line(&mut line).await.unwrap_or(0) == 0 {
                            return;
                        }
                        if let Some(value) =
                            line.to_ascii_lowercase().strip_prefix("content-length:")
                        {
                            length = value.trim().parse().unwrap();
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let mut body = vec![0; length];
                    conn.read_exact(&mut body).await.unwrap();
                    if counted.fetch_add(1, Ordering::SeqCst) < gone {
                        return; // read, and gone: the connection drops here
                    }
                    let answer = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                    conn.get_mut().write_all(answer.as_bytes()).await.unwrap();
                }
            });
        }
    });
    (base, read)
}

fn client() -> telemetry::client::HttpClient {
    telemetry::client::http_client(Duration::from_secs(5), telemetry::client::DEFAULT_IDLE).unwrap()
}

/// Whether the count of `outcome` for calls to 127.0.0.1 is `n`.
fn counted(outcome: &str, n: u32) -> bool {
    telemetry::metrics::render().lines().any(|line| {
        line == format!(
            "http_client_closed_connections_total{{callee=\"127.0.0.1\",outcome=\"{outcome}\"}} {n}"
        )
    })
}

#[tokio::test]
async fn a_lookup_marked_resendable_is_sent_again_once_and_answered() {
    telemetry::metrics::handle();
    let (base, read) = callee_that_goes_away(1).await;
    let answer = client()
        .get(format!("{base}/api/v1/users"))
        .with_extension(Resendable)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(
        read.load(Ordering::SeqCst),
        2,
        "the callee read it once, then once more"
    );
    assert!(counted("resent", 1), "{}", telemetry::metrics::render());
}

#[tokio::test]
async fn a_read_not_marked_is_not_sent_again() {
    // Some reads are recorded by their keeper (who looked at which client): twice would be
    // recorded twice.
    telemetry::metrics::handle();
    let (base, read) = callee_that_goes_away(1).await;
    let failed = client()
        .get(format!("{base}/clients/1001/points"))
        .send()
        .await
        .unwrap_err();
    assert!(telemetry::closed_connections::met_closing_connection(
        &failed
    ));
    assert_eq!(read.load(Ordering::SeqCst), 1);
    assert!(counted("failed", 1), "{}", telemetry::metrics::render());
}

#[tokio::test]
async fn a_change_the_callee_may_have_made_is_not_sent_again() {
    telemetry::metrics::handle();
    let (base, read) = callee_that_goes_away(1).await;
    let failed = client()
        .post(format!("{base}/orders"))
        .body("{}")
        .send()
        .await
        .unwrap_err();
    assert!(
        telemetry::closed_connections::met_closing_connection(&failed),
        "{}",
        telemetry::client::error_chain(&failed)
    );
    assert_eq!(read.load(Ordering::SeqCst), 1, "the order went out twice");
    assert!(counted("failed", 1), "{}", telemetry::metrics::render());
}

#[tokio::test]
async fn a_credit_by_its_reference_marked_resendable_is_sent_again_once() {
    telemetry::metrics::handle();
    let (base, read) = callee_that_goes_away(1).await;
    let answer = client()
        .post(format!("{base}/internal/v1/credits"))
        .body(r#"{"reference":"gift-card:X"}"#)
        .with_extension(Resendable)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(read.load(Ordering::SeqCst), 2);
    assert!(counted("resent", 1), "{}", telemetry::metrics::render());
}

#[tokio::test]
async fn a_resend_that_fails_again_is_counted_failed_and_not_sent_a_third_time() {
    telemetry::metrics::handle();
    let (base, read) = callee_that_goes_away(2).await;
    let failed = client()
        .get(format!("{base}/api/v1/users"))
        .with_extension(Resendable)
        .send()
        .await
        .unwrap_err();
    assert!(telemetry::closed_connections::met_closing_connection(
        &failed
    ));
    assert_eq!(read.load(Ordering::SeqCst), 2);
    assert!(counted("failed", 1), "{}", telemetry::metrics::render());
    assert!(!counted("resent", 1), "{}", telemetry::metrics::render());
}

#[test]
fn the_series_of_a_callee_exist_at_zero_before_its_first_closed_connection() {
    telemetry::closed_connections::expect_calls_to("http://point-service:8083");
    let text = telemetry::metrics::render();
    for outcome in ["resent", "failed"] {
        let line = format!(
            "http_client_closed_connections_total{{callee=\"point-service\",outcome=\"{outcome}\"}} 0"
        );
        assert!(text.lines().any(|l| l == line), "no {line} in:\n{text}");
    }
}
