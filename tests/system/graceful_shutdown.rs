//! Stopping a pod (SIGTERM) loses no request: a request in flight when the signal arrives is
//! answered in full, new connections are refused from then on (the balancer sends them to
//! another replica), and the process exits cleanly once the request is done. The request is
//! a relayed balance read held at a point service that answers only when the test says so,
//! so the order of events is the test's, not the clock's.

use std::sync::Arc;
use std::time::Duration;

use actix_web::{App, HttpResponse, web};
use e2e::Service;
use serde_json::json;
use tokio::sync::{Notify, mpsc};

#[tokio::test]
async fn a_request_in_flight_at_sigterm_is_answered_before_the_process_exits() {
    let (arrived_tx, mut arrived) = mpsc::unbounded_channel::<()>();
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
    let mut order = Service::start(
        "order-service",
        "postgres://postgres@127.0.0.1:5432/unused",
        &[("POINT_SERVICE_URL", &points)],
    )
    .await;

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
    // The listener closes: a new connection is refused while the old request still runs.
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
