//! PostgreSQL stopped under a running service: `/readyz` turns 503 while `/healthz` stays
//! 200, and readiness comes back on its own when the database does. Uses a cluster of the
//! test's own, never the shared server.

use std::time::Duration;

use e2e::{LocalCluster, Service, create_database, run};

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
