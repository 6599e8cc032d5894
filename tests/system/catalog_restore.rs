//! The catalog database restored alone to a time before a gift code was redeemed (a bad
//! migration or a mistaken `DELETE` recovered by a point-in-time restore, while the points
//! ledger keeps going): the restored catalog has forgotten the redemption, the ledger has
//! not. Redeeming the code again must never credit it a second time: the credit's reference
//! is the code (`gift-card:<code>`), not the redemption's row id that the restored catalog
//! hands out again, so the point service answers the first credit (same client) or refuses
//! it (another client) and the balance moves once.
//!
//! The restore is a real one of the database: `pg_dump` before the redemption, `pg_restore
//! --clean` after it, the order service restarted (as after a restore, nothing in memory).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use e2e::demo::{OMAR, SARA};
use e2e::demo_database;
use e2e::stack::{Databases, Stack};
use serde_json::{Value, json};

const CODE: &str = "WELCOME-100";

/// docs/runbook.md, "Restoring a database", `redeemed_by_another`: the redemption set back to
/// the client the ledger credited (the runbook's statement, with this test's values).
const REDEEMED_BY_ANOTHER_REMEDY: &str = "UPDATE gift_card_redemptions SET client_id = 1001, \
    points = 100, status = 'credited', credited_at = now(), answered_at = now(), \
    lease_until = NULL, last_error = NULL WHERE code = 'WELCOME-100' AND client_id = 1002 \
    AND status = 'pending' AND credit_target = 'point_service'";

/// The same, `credit_without_redemption`: the redemption the restore forgot, put back.
const CREDIT_WITHOUT_REDEMPTION_REMEDY: &str = "INSERT INTO gift_card_redemptions (code, \
    client_id, points, status, credited_at, answered_at, credit_target, credit_reference) \
    VALUES ('WELCOME-100', 1001, 100, 'credited', now(), now(), 'point_service', \
    'gift-card:WELCOME-100')";

async fn sql(url: &str, statement: &str) {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .batch_execute(statement)
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e}"));
}

/// Runs a PostgreSQL client tool (`pg_dump`, `pg_restore`, from the PATH).
fn pg_tool(tool: &str, args: &[&str]) {
    let output = Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{tool} (PostgreSQL's client tools) does not run: {e}"));
    assert!(
        output.status.success(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The catalog as it is now, to restore later.
fn back_up(database: &str, file: &Path) {
    pg_tool(
        "pg_dump",
        &[
            "--format=custom",
            "--file",
            file.to_str().unwrap(),
            database,
        ],
    );
}

/// The catalog as `file` holds it, in place of what it holds now.
fn restore(database: &str, file: &Path) {
    pg_tool(
        "pg_restore",
        &[
            "--clean",
            "--if-exists",
            "--single-transaction",
            "--dbname",
            database,
            file.to_str().unwrap(),
        ],
    );
}

async fn points(stack: &Stack, token: &str) -> String {
    let (status, balance) = stack
        .call(
            "GET",
            &format!("{}/api/v2/client/points", stack.order.base),
            Some(token),
            &[],
            None,
        )
        .await;
    assert_eq!(status, 200, "{balance}");
    balance["points"].as_str().unwrap().to_owned()
}

async fn redeem(stack: &Stack, token: &str) -> (u16, Value) {
    stack
        .call(
            "POST",
            &format!("{}/api/v2/client/gift-card-code", stack.order.base),
            Some(token),
            &[],
            Some(&json!({"code": CODE})),
        )
        .await
}

/// The ledger's gift-code credits of `CODE`: (client, points).
async fn credits(points_db: &str) -> Vec<(i64, String)> {
    let (client, connection) = tokio_postgres::connect(points_db, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .query(
            // Any reference that names the code, so that a credit under another reference
            // (a row id, a time) would be counted too.
            "SELECT client_id, points::text FROM point_entries \
             WHERE kind = 'gift_card_credit' AND reference LIKE $1 ORDER BY id",
            &[&format!("gift-card:{CODE}%")],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect()
}

/// The redemption of `CODE` in the catalog: its client, status and credit calls started.
async fn redemption(catalog_db: &str) -> Option<(i64, String, i32)> {
    let (client, connection) = tokio_postgres::connect(catalog_db, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .query_opt(
            "SELECT client_id, status, attempts FROM gift_card_redemptions WHERE code = $1",
            &[&CODE],
        )
        .await
        .unwrap()
        .map(|row| (row.get(0), row.get(1), row.get(2)))
}

/// `point-service cross-check` over the three databases: its exit code and its lines.
async fn cross_check(points_db: &str, catalog_db: &str, auth_db: &str) -> (i32, String) {
    let output = e2e::run(
        "point-service",
        &["cross-check"],
        points_db,
        &[
            ("CATALOG_DATABASE_URL", catalog_db),
            ("AUTH_DATABASE_URL", auth_db),
        ],
    )
    .await;
    (
        output.status.code().unwrap(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[tokio::test]
async fn a_code_redeemed_again_after_a_catalog_restore_is_not_credited_twice() {
    let auth_db = demo_database(&["auth-service"], "auth").await;
    let points_db = demo_database(&["point-service"], "points").await;
    let catalog_db = demo_database(&["order-service", "operator-service"], "catalog").await;
    let mut stack = Stack::start_with_order_env(
        &Databases {
            auth: auth_db.url().to_owned(),
            points: points_db.url().to_owned(),
            catalog: catalog_db.url().to_owned(),
        },
        // Quick retries, so that a credit refused after the restore is retried within the test.
        &[
            ("GIFT_CARD_RETRY_INTERVAL_MS", "200"),
            ("GIFT_CARD_RETRY_MAX_BACKOFF_SECONDS", "1"),
        ],
    )
    .await;
    let backup =
        std::env::temp_dir().join(format!("catalog-{}.dump", uuid::Uuid::new_v4().simple()));

    let check = async || cross_check(points_db.url(), catalog_db.url(), auth_db.url()).await;
    assert_eq!(
        check().await,
        (0, String::new()),
        "the demo's databases agree"
    );

    // The restore point: the code not yet redeemed.
    back_up(catalog_db.url(), &backup);
    let sara_before = points(&stack, SARA).await;
    let (status, answer) = redeem(&stack, SARA).await;
    assert_eq!(status, 200, "{answer}");
    let sara_after = points(&stack, SARA).await;
    assert_ne!(sara_after, sara_before, "the first redemption credits");
    assert_eq!(credits(points_db.url()).await, [(1001, "100".to_owned())]);

    // Disaster and recovery: the catalog alone back to before the redemption.
    restore(catalog_db.url(), &backup);
    stack.start_order_again().await;
    assert!(
        redemption(catalog_db.url()).await.is_none(),
        "the restored catalog forgot it"
    );
    assert_eq!(
        check().await,
        (
            1,
            "credit_without_redemption\tgift-card:WELCOME-100\tclient 1001\t100\n".to_owned()
        ),
        "the cross-check tells what the restore lost"
    );

    // The same client redeems it again: answered as redeemed, credited once.
    let (status, answer) = redeem(&stack, SARA).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(points(&stack, SARA).await, sara_after, "no second credit");
    assert_eq!(credits(points_db.url()).await, [(1001, "100".to_owned())]);
    assert_eq!(
        check().await,
        (0, String::new()),
        "the redemption is back, as it was"
    );

    // Restored once more, another client redeems it: the ledger's reference is Sara's, so
    // Omar is never credited; his redemption stays pending (retried, refused each time with
    // 409) for a person to settle, and the cross-database check lists it.
    restore(catalog_db.url(), &backup);
    stack.start_order_again().await;
    let omar_before = points(&stack, OMAR).await;
    let (status, answer) = redeem(&stack, OMAR).await;
    assert_ne!(status, 200, "{answer}");
    // Wait until the retry task has tried the credit again, twice more: each try refused.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (client, state, attempts) = redemption(catalog_db.url()).await.unwrap();
        assert_eq!(
            (client, state.as_str()),
            (1002, "pending"),
            "Omar's redemption is never credited"
        );
        if attempts >= 3 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the credit was tried {attempts} times in 30 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        points(&stack, OMAR).await,
        omar_before,
        "Omar is never credited"
    );
    assert_eq!(points(&stack, SARA).await, sara_after);
    assert_eq!(credits(points_db.url()).await, [(1001, "100".to_owned())]);
    assert_eq!(
        check().await,
        (
            1,
            "redeemed_by_another\tgift-card:WELCOME-100\tcredited 100 to 1001, redeemed by 1002 (pending)\n"
                .to_owned()
        ),
    );

    // docs/runbook.md, "Restoring a database": each line settled as it says, and the
    // cross-check agrees again. Omar's redemption set back to Sara's credited one:
    sql(catalog_db.url(), REDEEMED_BY_ANOTHER_REMEDY).await;
    assert_eq!(
        check().await,
        (0, String::new()),
        "settled as the runbook says"
    );
    // The catalog restored once more (the redemption forgotten), and put back by hand:
    restore(catalog_db.url(), &backup);
    stack.start_order_again().await;
    assert_eq!(check().await.0, 1);
    sql(catalog_db.url(), CREDIT_WITHOUT_REDEMPTION_REMEDY).await;
    assert_eq!(
        check().await,
        (0, String::new()),
        "settled as the runbook says"
    );
    let (status, answer) = redeem(&stack, OMAR).await;
    assert_ne!(status, 200, "the code is redeemed again, by Sara: {answer}");
    assert_eq!(points(&stack, OMAR).await, omar_before);
    let _ = std::fs::remove_file(&backup);
}
