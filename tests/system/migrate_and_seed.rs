//! `migrate` and `seed` as the deployment runs them.

use db::testing::TestDatabase;
use e2e::{Running, SERVICES, repo_root, run};

#[tokio::test]
async fn the_two_catalog_services_can_migrate_the_shared_database_at_once() {
    let database = TestDatabase::empty("catalog").await;
    let (order, operator) = tokio::join!(
        run("order-service", &["migrate"], database.url(), &[]),
        run("operator-service", &["migrate"], database.url(), &[]),
    );
    for (name, output) in [("order-service", order), ("operator-service", operator)] {
        assert!(
            output.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[tokio::test]
async fn the_demo_fixture_seeds_every_service_twice() {
    let fixture = repo_root().join("deploy/fixtures/demo.json");
    let fixture = fixture.to_str().unwrap();
    let mut databases = std::collections::HashMap::new();
    for (name, label) in SERVICES {
        if !databases.contains_key(label) {
            databases.insert(label, TestDatabase::empty(label).await);
        }
        let url = databases[label].url().to_owned();
        let migrated = run(name, &["migrate"], &url, &[]).await;
        assert!(
            migrated.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&migrated.stderr)
        );
        for round in 1..=2 {
            let seeded = run(name, &["seed", fixture], &url, &[]).await;
            assert!(
                seeded.status.success(),
                "{name} seed round {round}: {}",
                String::from_utf8_lossy(&seeded.stderr)
            );
        }
    }
}

#[tokio::test]
async fn a_fixture_that_is_not_json_fails_with_exit_code_1() {
    let database = TestDatabase::empty("auth").await;
    let file = std::env::temp_dir().join(format!("bad-fixture-{}.json", uuid::Uuid::new_v4()));
    std::fs::write(&file, "{ not json").unwrap();
    let output = run(
        "auth-service",
        &["seed", file.to_str().unwrap()],
        database.url(),
        &[],
    )
    .await;
    std::fs::remove_file(&file).ok();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not valid JSON"));
}

/// The init container of the Kubernetes Deployments: it holds the pod until the migration
/// Job has migrated, and gives up with exit 1 after its timeout.
#[tokio::test]
async fn wait_for_migrations_holds_until_migrate_has_run() {
    let database = TestDatabase::empty("points").await;
    let gave_up = run(
        "point-service",
        &["wait-for-migrations", "--timeout-secs", "1"],
        database.url(),
        &[],
    )
    .await;
    assert_eq!(gave_up.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&gave_up.stderr).contains("waiting for the points migrations"),
        "{}",
        String::from_utf8_lossy(&gave_up.stderr)
    );

    let mut waiting = Running::start(
        "point-service",
        &["wait-for-migrations", "--timeout-secs", "50"],
        database.url(),
        &[],
    );
    // Where it should be: it has found the migrations pending and says it waits for them
    // (then looks again every 2 s) ...
    let said = waiting
        .log()
        .wait_for("saying it waits for pending migrations", |line| {
            line.contains("waiting for migrations: pending migrations")
        })
        .await;
    // ... and it still runs, past that line.
    assert_eq!(
        waiting.exit_status(),
        None,
        "it ended instead of waiting for the migrations: {said}"
    );
    let migrated = run("point-service", &["migrate"], database.url(), &[]).await;
    assert!(migrated.status.success());
    // Then it ends on its own, having found the migrations there: it looked again after
    // `migrate` had run, so it was still waiting until then.
    let (status, lines) = waiting.finish().await;
    assert!(status.success(), "{}", lines.join("\n"));
    assert!(
        lines
            .iter()
            .any(|line| line.contains("migrations are up to date")),
        "{}",
        lines.join("\n")
    );
}
