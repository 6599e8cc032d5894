//! PostgreSQL stopped under running services: `/readyz` turns 503 while `/healthz` stays
//! 200, and everything comes back on its own when the database does. Uses a cluster of the
//! test's own, never the shared server.

use std::time::{Duration, Instant};

use e2e::demo::{OFFER_100, OMAR, SARA};
use e2e::stack::Stack;
use e2e::{LocalCluster, Service, create_database, demo_database, demo_databases_on, run};
use serde_json::json;

#[tokio::test]
async fn readyz_follows_the_database_and_recovers_without_a_restart() {
    let cluster = LocalCluster::start();
    let url = create_database(&cluster.admin_url(), "auth").await;
    let migrated = run("auth-service", &["migrate"], &url, &[]).await;
    assert!(
        migrated.status.success(),
        "{}",
        String::from_utf8_lossy(&migrated.stderr)
    );
    let service = Service::start("auth-service", &url, &[]).await;
    assert_eq!(service.get("/readyz").await.status(), 200);

    cluster.kill();
    service
        .wait_until(Duration::from_secs(10), |s| s == 503, "/readyz")
        .await;
    assert_eq!(
        service.get("/healthz").await.status(),
        200,
        "liveness must not depend on the database"
    );

    cluster.up();
    service
        .wait_until(Duration::from_secs(20), |s| s == 200, "/readyz")
        .await;
}

/// PostgreSQL restarted under the whole running system: every service reports not ready
/// while it is down and answers errors in its envelope instead of hanging; when it is back,
/// all of them serve again without a restart of their own, and a points spend works.
#[tokio::test]
async fn the_whole_system_recovers_from_a_database_restart() {
    let cluster = LocalCluster::start();
    let admin = cluster.admin_url();
    let databases = demo_databases_on(&admin).await;
    let stack = Stack::start(&databases).await;
    let services = [&stack.auth, &stack.points, &stack.order, &stack.operator];
    let balance = format!("{}/api/v2/client/points", stack.order.base);
    let children = format!(
        "{}/api/v2/client/system-categories/1/children",
        stack.order.base
    );
    assert_eq!(
        stack.call("GET", &balance, Some(SARA), &[], None).await.0,
        200
    );

    cluster.kill();
    for service in services {
        service
            .wait_until(Duration::from_secs(10), |s| s == 503, "/readyz")
            .await;
    }
    // Errors in each service's envelope, quickly (the pool's wait timeout, not a hang). The
    // auth lookup failing is a 401 by the spec ("an outage looks like a bad token").
    let started = std::time::Instant::now();
    // Omar was not used before the outage, so the point service's caller cache does not
    // know him.
    let (status, body) = stack.call("GET", &balance, Some(OMAR), &[], None).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["error"]["code"], "UNAUTHORIZED");
    // A caller the point service looked up in the last seconds (AUTH_CALLER_CACHE_SECONDS)
    // gets as far as the point service's own database: its 500, in envelope B.
    let (status, body) = stack.call("GET", &balance, Some(SARA), &[], None).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (500, &json!("INTERNAL_ERROR")),
        "{body}"
    );
    let (status, body) = stack.call("GET", &children, None, &[], None).await;
    assert_eq!((status, &body["statusCode"]), (500, &json!(500)), "{body}");
    assert!(started.elapsed() < Duration::from_secs(15));

    cluster.up();
    for service in services {
        service
            .wait_until(Duration::from_secs(30), |s| s == 200, "/readyz")
            .await;
    }
    let (status, body) = stack.call("GET", &balance, Some(SARA), &[], None).await;
    assert_eq!(
        (status, body["points"].as_str()),
        (200, Some("630.5")),
        "{body}"
    );
    assert_eq!(stack.call("GET", &children, None, &[], None).await.0, 200);
    let gift = json!({"point_offer_id": OFFER_100, "to_client_id": 1002, "payment_type": "point"});
    let orders = format!("{}/api/v2/client/point-orders", stack.order.base);
    let (status, order) = stack
        .call(
            "POST",
            &orders,
            Some(SARA),
            &[("Idempotency-Key", "after-restart")],
            Some(&gift),
        )
        .await;
    assert_eq!(
        (status, order["status"].as_str()),
        (200, Some("successful")),
        "{order}"
    );
    let (_, body) = stack.call("GET", &balance, Some(SARA), &[], None).await;
    assert_eq!(body["points"], "510.5");
}

/// A first host that accepts TCP and never answers (a frozen old primary) in a multi-host
/// `DATABASE_URL`: each host has its own connect deadline, so the second (the promoted
/// standby) is reached once that one passes, by `migrate` and by the service, and then
/// first: the service is ready within one connect timeout and answers at once after.
#[tokio::test]
async fn a_frozen_first_host_does_not_keep_the_service_from_the_next_one() {
    let frozen = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let frozen_port = frozen.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = frozen.accept().await {
            held.push(socket);
        }
    });
    let database = demo_database(&["auth-service"], "auth").await;
    let server: tokio_postgres::Config = database.url().parse().unwrap();
    let url = format!(
        "postgres://postgres@127.0.0.1:{frozen_port},127.0.0.1:{}/{}?target_session_attrs=read-write",
        server.get_ports().first().copied().unwrap_or(5432),
        database.name()
    );
    // The pool's (and every tool's) per-host connect timeout.
    let per_host = db::PoolSettings::new(&url, 2).connect_timeout;

    // The bounds below tell one wait on the frozen host (at least `per_host`) from two or
    // more (at least twice that): what the rest of the work takes, even on a loaded
    // machine, stays far below one `per_host` (5 s).
    let started = Instant::now();
    let migrated = run("auth-service", &["migrate"], &url, &[]).await;
    assert!(
        migrated.status.success(),
        "{}",
        String::from_utf8_lossy(&migrated.stderr)
    );
    assert!(
        started.elapsed() < 2 * per_host,
        "migrate took {:?}: it waited on the frozen host more than once",
        started.elapsed()
    );

    let service = Service::start("auth-service", &url, &[]).await;
    let started = Instant::now();
    service
        .wait_until(2 * per_host, |s| s == 200, "/readyz")
        .await;
    assert!(
        started.elapsed() >= per_host,
        "the frozen host was not tried first"
    );

    // Once switched, a request does not wait on the frozen host again: answered in less
    // than one connect timeout.
    let started = Instant::now();
    let caller = service
        .client()
        .get(format!("{}/api/v1/users", service.base))
        .bearer_auth(SARA)
        .send()
        .await
        .unwrap();
    assert_eq!(caller.status(), 200);
    assert!(
        started.elapsed() < per_host,
        "a request after the switch took {:?}, a connect timeout ({per_host:?}) or more",
        started.elapsed()
    );
}
