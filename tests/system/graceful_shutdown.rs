//! Stopping a pod (SIGTERM) loses no request: a request in flight when the signal arrives is
//! answered in full, the open connections are served until the drain ends (each answer closing
//! its own), new connections are refused after it (the balancer sends them to another
//! replica), and the process exits cleanly once the request is done. The request is
//! a relayed balance read held at a point service that answers only when the test says so,
//! so the order of events is the test's, not the clock's.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use actix_web::{App, HttpResponse, web};
use e2e::Service;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::{Notify, mpsc};

#[tokio::test]
async fn a_request_in_flight_at_sigterm_is_answered_before_the_process_exits() {
    let HeldRelay {
        mut order,
        mut arrived,
        release,
    } = HeldRelay::start().await;

    let url = format!("{}/api/v2/client/points", order.base);
    let in_flight = tokio::spawn(async move {
        let response = reqwest::Client::new()
            .get(url)
            .bearer_auth(e2e::demo::SARA)
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    });
    arrived.recv().await.unwrap();

    order.signal_term();
    // After the drain the listener closes: a new connection is refused while the old request
    // still runs.
    let port = order.port();
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err(),
        "the stopping order service still accepts connections"
    );
    assert!(!in_flight.is_finished(), "the held request ended early");

    release.notify_one();
    let (status, body) = in_flight.await.unwrap();
    assert_eq!((status, body.as_str()), (200, r#"{"points":"42"}"#));
    let exit = order.exited().await;
    assert!(exit.success(), "exited with {exit}");
}

/// One HTTP/1.1 exchange on an open connection: the request line and headers of `GET path`
/// out, the response's status, headers (lower-case names) and body in.
async fn exchange(
    conn: &mut BufReader<TcpStream>,
    path: &str,
) -> (u16, HashMap<String, String>, String) {
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: order\r\nAuthorization: Bearer {}\r\n\r\n",
        e2e::demo::SARA
    );
    conn.get_mut().write_all(request.as_bytes()).await.unwrap();
    let mut status_line = String::new();
    conn.read_line(&mut status_line).await.unwrap();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .unwrap_or_else(|| panic!("no status line: {status_line:?}"))
        .parse()
        .unwrap();
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        conn.read_line(&mut line).await.unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
    }
    let length: usize = headers["content-length"].parse().unwrap();
    let mut body = vec![0; length];
    conn.read_exact(&mut body).await.unwrap();
    (status, headers, String::from_utf8(body).unwrap())
}

/// Whether the server closed `conn` (end of stream, nothing more sent) within `within`.
async fn closed_by_server(conn: &mut BufReader<TcpStream>, within: Duration) -> bool {
    let mut rest = Vec::new();
    matches!(
        tokio::time::timeout(within, conn.read_to_end(&mut rest)).await,
        Ok(Ok(0))
    )
}

/// Behind a balancer that only forwards TCP (kube-proxy), a client keeps its connection to a
/// replica across requests, and may write its next request on it at any moment. After SIGTERM
/// the server closes no idle kept-alive connection before the drain is over
/// (`HTTP_STOP_DRAIN_SECS`, longer than the callers keep an idle connection): one used during
/// the drain is answered with `Connection: close` and closed after its answer, a request in
/// flight is answered in full with `Connection: close`, and only a connection still idle at
/// the drain's end is closed by the server. Nothing waits for the shutdown timeout.
#[tokio::test]
async fn after_sigterm_kept_alive_connections_are_served_with_close_until_the_drain_ends() {
    let HeldRelay {
        mut order,
        mut arrived,
        release,
    } = HeldRelay::start().await;
    let connect = || async {
        BufReader::new(
            TcpStream::connect(("127.0.0.1", order.port()))
                .await
                .unwrap(),
        )
    };
    // Three kept-alive connections, each past one request.
    let (mut busy, mut used, mut idle) = (connect().await, connect().await, connect().await);
    for conn in [&mut busy, &mut used, &mut idle] {
        let (status, headers, _) = exchange(conn, "/healthz").await;
        assert_eq!(status, 200);
        assert_ne!(headers.get("connection").map(String::as_str), Some("close"));
    }
    let in_flight = tokio::spawn(async move {
        let answer = exchange(&mut busy, "/api/v2/client/points").await;
        (answer, busy)
    });
    arrived.recv().await.unwrap();

    let signalled = std::time::Instant::now();
    order.signal_term();
    // Well inside the drain (it starts after the signal): the idle connection is still open,
    // and a request written on it now is answered, with `Connection: close`.
    assert!(
        !closed_by_server(&mut idle, DRAIN / 2).await,
        "an idle kept-alive connection was closed {:?} after SIGTERM, inside the {DRAIN:?} drain",
        signalled.elapsed()
    );
    let (status, headers, _) = exchange(&mut used, "/healthz").await;
    assert_eq!(status, 200);
    assert_eq!(headers.get("connection").map(String::as_str), Some("close"));
    assert!(closed_by_server(&mut used, Duration::from_secs(5)).await);
    // Once the drain is over, the connection still idle is closed.
    assert!(
        closed_by_server(&mut idle, DRAIN * 4).await,
        "the idle kept-alive connection stayed open after the drain"
    );
    assert!(
        signalled.elapsed() >= DRAIN,
        "closed after {:?}",
        signalled.elapsed()
    );
    assert!(!in_flight.is_finished(), "the held request ended early");

    release.notify_one();
    let ((status, headers, body), mut busy) = in_flight.await.unwrap();
    assert_eq!((status, body.as_str()), (200, r#"{"points":"42"}"#));
    assert_eq!(
        headers.get("connection").map(String::as_str),
        Some("close"),
        "{headers:?}"
    );
    assert!(closed_by_server(&mut busy, Duration::from_secs(5)).await);
    let started = std::time::Instant::now();
    let exit = order.exited().await;
    assert!(exit.success(), "exited with {exit}");
    // Not held to the shutdown timeout once nothing is in flight: well under it (a bound
    // a loaded machine keeps, which a wait for the timeout cannot).
    assert!(
        started.elapsed() < server::run::SHUTDOWN_TIMEOUT / 2,
        "exit waited {:?} (the shutdown timeout is {} s)",
        started.elapsed(),
        server::run::SHUTDOWN_TIMEOUT.as_secs()
    );
}

/// The order service's drain here: short, and its callers' idle time (1 s) + 5 s as it must
/// be at least (`server::config::http_limits::STOP_MARGIN`).
const DRAIN: Duration = Duration::from_secs(6);

/// An order service whose relay goes to a point service that holds every balance read: each
/// one's arrival is sent on `arrived`, and it is answered (200) only when `release` is
/// notified.
struct HeldRelay {
    order: Service,
    arrived: mpsc::UnboundedReceiver<()>,
    release: Arc<Notify>,
}

impl HeldRelay {
    async fn start() -> HeldRelay {
        let (arrived_tx, arrived) = mpsc::unbounded_channel::<()>();
        let release = Arc::new(Notify::new());
        let held = release.clone();
        let points = server::spawn_local(move || {
            let (arrived_tx, held) = (arrived_tx.clone(), held.clone());
            App::new().route(
                "/api/v2/client/points",
                web::get().to(move || {
                    let (arrived_tx, held) = (arrived_tx.clone(), held.clone());
                    async move {
                        arrived_tx.send(()).unwrap();
                        held.notified().await;
                        HttpResponse::Ok().json(json!({"points": "42"}))
                    }
                }),
            )
        })
        .unwrap();
        let order = Service::start(
            "order-service",
            "postgres://postgres@127.0.0.1:5432/unused",
            &[
                ("POINT_SERVICE_URL", &points),
                ("HTTP_CALLER_IDLE_SECS", "1"),
                ("HTTP_STOP_DRAIN_SECS", &DRAIN.as_secs().to_string()),
            ],
        )
        .await;
        HeldRelay {
            order,
            arrived,
            release,
        }
    }
}
