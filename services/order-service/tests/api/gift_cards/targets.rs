//! Where a credit goes and what it is called are the redemption's own, fixed when it is
//! made: every retry goes to the same side under the same reference, whatever
//! `USE_POINT_SERVICE` says by then or on another replica, and the reference is the code's,
//! not a number a restored catalog could hand out again.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use db::testing::TestDatabase;
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Double, Integer, Nullable, Text};
use order_service::config::CreditTarget;
use order_service::gift_cards::retry;
use serde_json::json;
use tokio::sync::watch;

use crate::helpers::*;

use super::ledger::*;

/// The migration that records each redemption's target and reference.
const TARGET_MIGRATION: &str = "2026-11-27-000060_gift_card_credit_target";

/// Options of a replica whose point service is `points`: `USE_POINT_SERVICE` and
/// `LEGACY_URL` as given, its retry task every 20 ms when `fast` (else idle).
fn replica(
    points: &Ledger,
    use_point_service: bool,
    legacy: Option<&Ledger>,
    fast: bool,
) -> Options {
    Options {
        use_point_service,
        legacy_url: legacy.map(|l| l.url.clone()),
        ..on_ledger(points, fast)
    }
}

/// The redemption's recorded target and reference.
#[derive(QueryableByName, Debug, PartialEq, Eq)]
struct Recorded {
    #[diesel(sql_type = Nullable<Text>)]
    credit_target: Option<String>,
    #[diesel(sql_type = Text)]
    credit_reference: String,
}

async fn recorded(database: &TestDatabase, code: &str) -> Recorded {
    use diesel_async::RunQueryDsl;
    diesel::sql_query(
        "SELECT credit_target, credit_reference FROM gift_card_redemptions WHERE code = $1",
    )
    .bind::<Text, _>(code)
    .get_result(&mut database.connect().await)
    .await
    .unwrap()
}

fn target(target: Option<&str>, reference: &str) -> Recorded {
    Recorded {
        credit_target: target.map(str::to_owned),
        credit_reference: reference.to_owned(),
    }
}

/// As if the backoff after the last failed try had passed.
async fn due_now(database: &TestDatabase) {
    database
        .execute("UPDATE gift_card_redemptions SET next_attempt_at = now()")
        .await;
}

/// One pass of a replica's retry task, with this credit client, on `database`.
async fn pass(database: &TestDatabase, credit: &order_service::state::Credit) -> retry::Pass {
    let pool = db::build_pool(&db::PoolSettings::new(database.url(), 2)).unwrap();
    let (_stop, running) = watch::channel(false);
    retry::pass(&pool, credit, &Options::default().gift_card_retry, &running)
        .await
        .unwrap()
}

/// (a) A redemption made while `USE_POINT_SERVICE=false` whose legacy credit failed is
/// retried by a replica started after the switch (`USE_POINT_SERVICE=true`, `LEGACY_URL`
/// still set): its retry task sends it to the legacy system, under the same reference, and
/// the point service receives nothing.
#[tokio::test]
async fn a_legacy_redemption_is_retried_on_the_legacy_system_after_the_switch() {
    let (points, legacy) = (Ledger::start(), Ledger::start());
    let before = spawn_app_with(replica(&points, false, Some(&legacy), false)).await;
    legacy.fail_next(1);
    assert_eq!(
        before.redeem(1001, "WELCOME-100").await,
        error_c(502, "The points could not be credited yet, try again")
    );
    due_now(&before.database).await;
    start(
        before.database.url(),
        &points.url,
        &replica(&points, true, Some(&legacy), true),
    );
    wait_until_none_pending(&before).await;
    assert_eq!(
        legacy.sent(),
        BTreeMap::from([("gift-card:WELCOME-100".to_owned(), 2)])
    );
    assert_eq!(
        points.sent(),
        BTreeMap::new(),
        "nothing reaches the point service"
    );
    assert_eq!(
        recorded(&before.database, "WELCOME-100").await,
        target(Some("legacy"), "gift-card:WELCOME-100")
    );
}

/// (b) The reverse: a redemption made while `USE_POINT_SERVICE=true` whose credit failed,
/// resumed by its owner through a replica configured with `USE_POINT_SERVICE=false`, goes
/// to the point service; the legacy system receives nothing.
#[tokio::test]
async fn a_point_service_redemption_is_resumed_on_the_point_service_by_a_legacy_replica() {
    let (points, legacy) = (Ledger::start(), Ledger::start());
    let before = spawn_app_with(replica(&points, true, None, false)).await;
    points.fail_next(1);
    assert_eq!(before.redeem(1001, "WELCOME-100").await.0, 502);
    let other = start(
        before.database.url(),
        &points.url,
        &replica(&points, false, Some(&legacy), false),
    );
    assert_eq!(
        redeem_at(&before.client, &other, 1001, "WELCOME-100").await,
        (
            200,
            json!({"message": "The code was redeemed", "code": "WELCOME-100", "points": "100"})
        )
    );
    assert_eq!(
        points.sent(),
        BTreeMap::from([("gift-card:WELCOME-100".to_owned(), 2)])
    );
    assert_eq!(
        legacy.sent(),
        BTreeMap::new(),
        "nothing reaches the legacy system"
    );
    assert_eq!(
        recorded(&before.database, "WELCOME-100").await,
        target(Some("point_service"), "gift-card:WELCOME-100")
    );
}

/// (c) A new redemption's reference is `gift-card:<code>`, the same on the request's try and
/// on each of the retry task's; and a catalog restored from a backup taken before it, whose
/// sequence hands the same redemption id out again to another code, gives that code a
/// reference of its own (under `gift-card:<id>` the point service would have answered the
/// first credit again and credited nothing).
#[tokio::test]
async fn the_reference_is_the_codes_on_every_try_and_after_a_restore() {
    let ledger = Ledger::start();
    ledger.fail_next(2);
    let app = spawn_app_with(on_ledger(&ledger, true)).await;
    assert_eq!(app.redeem(1001, "WELCOME-100").await.0, 502);
    wait_until_none_pending(&app).await;
    assert_eq!(
        ledger.sent(),
        BTreeMap::from([("gift-card:WELCOME-100".to_owned(), 3)]),
        "the request's try and the retry task's two"
    );
    // The restore: the redemption is gone, and its id will be handed out again.
    app.sql(
        "DELETE FROM gift_card_redemptions; \
         ALTER SEQUENCE gift_card_redemptions_id_seq RESTART",
    )
    .await;
    assert_eq!(app.redeem(1002, "RAMADAN-250").await.0, 200);
    assert_eq!(
        count(
            &app,
            "SELECT id AS n FROM gift_card_redemptions WHERE code = 'RAMADAN-250'"
        )
        .await,
        1,
        "the same id as the first redemption"
    );
    assert_eq!(
        ledger.credited(),
        BTreeMap::from([
            ("gift-card:RAMADAN-250".to_owned(), 1),
            ("gift-card:WELCOME-100".to_owned(), 1),
        ])
    );
}

/// A database migrated up to [`TARGET_MIGRATION`], then given `before` (rows as the
/// releases before it made them), then migrated to the end.
async fn migrated_around_target(label: &str, before: &str) -> TestDatabase {
    let database = TestDatabase::empty(label).await;
    let mut folders: Vec<String> = std::fs::read_dir(catalog_db::MIGRATIONS.source_dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let (earlier, later): (Vec<_>, Vec<_>) = folders
        .iter()
        .partition(|name| name.as_str() < TARGET_MIGRATION);
    let up = |name: &str| {
        std::fs::read_to_string(
            Path::new(catalog_db::MIGRATIONS.source_dir)
                .join(name)
                .join("up.sql"),
        )
        .unwrap()
    };
    for name in &earlier {
        database.execute(&up(name)).await;
    }
    database.execute(before).await;
    assert_eq!(
        <[_]>::first(&later).map(|name| name.as_str()),
        Some(TARGET_MIGRATION)
    );
    for name in &later {
        database.execute(&up(name)).await;
    }
    database
}

/// (d) A redemption made before the migration (by the migrations before it, with the rows
/// they allowed) keeps the reference it was sent under, `gift-card:<id>`; its first try
/// since fixes its target from that replica's configuration (here the legacy system, where
/// its earlier tries went), and the retry after the switch goes there again under the
/// same reference. A credited one keeps its reference and no target.
#[tokio::test]
async fn a_redemption_made_before_the_migration_keeps_its_reference_and_first_target() {
    let database = migrated_around_target(
        "gift_card_targets",
        "INSERT INTO gift_card_codes (code, points, active) \
             VALUES ('WELCOME-100', 100, true), ('RAMADAN-250', 250, true); \
         INSERT INTO gift_card_redemptions (code, client_id, points, attempts, last_error) \
             VALUES ('WELCOME-100', 1001, 100, 1, 'credit answered 503 Service Unavailable'); \
         INSERT INTO gift_card_redemptions \
             (code, client_id, points, status, credited_at, answered_at, attempts) \
             VALUES ('RAMADAN-250', 1002, 250, 'credited', now(), now(), 1)",
    )
    .await;
    assert_eq!(
        recorded(&database, "WELCOME-100").await,
        target(None, "gift-card:1")
    );
    assert_eq!(
        recorded(&database, "RAMADAN-250").await,
        target(None, "gift-card:2")
    );

    let (points, legacy) = (Ledger::start(), Ledger::start());
    legacy.fail_next(1);
    let still_legacy = replica_credit(CreditTarget::Legacy, &points.url, Some(&legacy.url));
    assert_eq!(
        pass(&database, &still_legacy).await,
        retry::Pass {
            tried: 1,
            credited: 0
        }
    );
    assert_eq!(
        recorded(&database, "WELCOME-100").await,
        target(Some("legacy"), "gift-card:1")
    );
    due_now(&database).await;
    let switched = replica_credit(CreditTarget::PointService, &points.url, Some(&legacy.url));
    assert_eq!(
        pass(&database, &switched).await,
        retry::Pass {
            tried: 1,
            credited: 1
        }
    );
    assert_eq!(
        legacy.sent(),
        BTreeMap::from([("gift-card:1".to_owned(), 2)])
    );
    assert_eq!(points.sent(), BTreeMap::new());
    assert_eq!(
        recorded(&database, "RAMADAN-250").await,
        target(None, "gift-card:2")
    );
    // Fixed means fixed, in the database too.
    for change in [
        "UPDATE gift_card_redemptions SET credit_target = 'point_service' WHERE code = 'WELCOME-100'",
        "UPDATE gift_card_redemptions SET credit_reference = 'gift-card:WELCOME-100' WHERE code = 'WELCOME-100'",
    ] {
        assert!(refused(&database, change).await, "{change}");
    }
}

/// Whether the database refuses `statement`.
async fn refused(database: &TestDatabase, statement: &str) -> bool {
    use diesel_async::RunQueryDsl;
    diesel::sql_query(statement)
        .execute(&mut database.connect().await)
        .await
        .is_err()
}

/// (e) A legacy redemption tried by a replica with `USE_POINT_SERVICE=true` and no
/// `LEGACY_URL` is sent nowhere: it stays pending with a clear error, its retry task keeps
/// trying (and alerting), its owner gets 502 there, and the point service receives nothing.
/// A replica with the URL then credits it on the legacy system.
#[tokio::test]
async fn a_legacy_redemption_without_legacy_url_stays_pending_and_never_reaches_the_point_service()
{
    let (points, legacy) = (Ledger::start(), Ledger::start());
    let before = spawn_app_with(replica(&points, false, Some(&legacy), false)).await;
    legacy.fail_next(1);
    assert_eq!(before.redeem(1001, "WELCOME-100").await.0, 502);
    due_now(&before.database).await;
    let without = start(
        before.database.url(),
        &points.url,
        &replica(&points, true, None, true),
    );
    let deadline = tokio::time::Instant::now() + WAIT;
    while count(
        &before,
        "SELECT count(*) AS n FROM gift_card_redemptions \
         WHERE attempts >= 4 OR status = 'credited'",
    )
    .await
        == 0
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the retry task keeps trying"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        count(
            &before,
            "SELECT count(*) AS n FROM gift_card_redemptions \
             WHERE status = 'pending' AND credit_target = 'legacy' \
               AND last_error = 'the credit goes to the legacy system and LEGACY_URL is not set'"
        )
        .await,
        1,
        "still pending, with the reason"
    );
    assert_eq!(
        redeem_while_in_progress(&before.client, &without).await,
        error_c(502, "The points could not be credited yet, try again")
    );
    let metrics = answer(
        before
            .client
            .get(format!("{without}/metrics"))
            .send()
            .await
            .unwrap(),
    )
    .await
    .1;
    assert!(
        metrics
            .as_str()
            .unwrap()
            .contains(r#"gift_card_credit_attempts_total{by="retry",outcome="unconfigured"}"#)
    );
    assert_eq!(
        points.sent(),
        BTreeMap::new(),
        "nothing reaches the point service"
    );
    assert_eq!(
        legacy.sent(),
        BTreeMap::from([("gift-card:WELCOME-100".to_owned(), 1)]),
        "only the first try was sent"
    );
    // A replica with LEGACY_URL: the owner's retry there credits it on the legacy system.
    assert_eq!(
        redeem_while_in_progress(&before.client, &before.base)
            .await
            .0,
        200
    );
    assert_eq!(
        legacy.sent(),
        BTreeMap::from([("gift-card:WELCOME-100".to_owned(), 2)])
    );
    assert_eq!(points.sent(), BTreeMap::new());
}

/// Client 1001's redemption of WELCOME-100 through the replica at `base`, asked again
/// while the other replica's retry task holds it for a try (409 in progress).
async fn redeem_while_in_progress(http: &reqwest::Client, base: &str) -> (u16, serde_json::Value) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        match redeem_at(http, base, 1001, "WELCOME-100").await {
            (409, _) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            other => return other,
        }
    }
}

/// The release before's `take_due`, verbatim (its `RETURNING_LEASE` written out): `$1` is
/// the lease's length in seconds.
const OLD_TAKE_DUE: &str = "UPDATE gift_card_redemptions r \
         SET lease_until = now() + make_interval(secs => $1), attempts = r.attempts + 1 \
         WHERE r.id = (SELECT id FROM gift_card_redemptions \
                       WHERE status = 'pending' AND next_attempt_at <= now() \
                         AND (lease_until IS NULL OR lease_until <= now()) \
                       ORDER BY next_attempt_at, id LIMIT 1 \
                       FOR UPDATE SKIP LOCKED) \
         RETURNING id, client_id, points, attempts AS attempt";

/// The release before's `take_locked`, verbatim: `$1` the redemption, `$2` the lease's
/// length in seconds.
const OLD_TAKE_LOCKED: &str = "UPDATE gift_card_redemptions \
         SET lease_until = now() + make_interval(secs => $2), attempts = attempts + 1 \
         WHERE id = $1 \
         RETURNING id, client_id, points, attempts AS attempt";

/// What the release before's take statements return, as far as these tests look.
#[derive(QueryableByName, Debug, PartialEq, Eq)]
struct OldLease {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Integer)]
    attempt: i32,
}

/// The release before's retry pass taking the most overdue free pending redemption.
async fn old_take_due(database: &TestDatabase) -> Result<Option<OldLease>, String> {
    use diesel::OptionalExtension;
    use diesel_async::RunQueryDsl;
    diesel::sql_query(OLD_TAKE_DUE)
        .bind::<Double, _>(60.0)
        .get_result(&mut database.connect().await)
        .await
        .optional()
        .map_err(|e| e.to_string())
}

/// The release before's request path taking redemption `id`, which it found free.
async fn old_take_locked(database: &TestDatabase, id: i64) -> Result<OldLease, String> {
    use diesel_async::RunQueryDsl;
    diesel::sql_query(OLD_TAKE_LOCKED)
        .bind::<BigInt, _>(id)
        .bind::<Double, _>(60.0)
        .get_result(&mut database.connect().await)
        .await
        .map_err(|e| e.to_string())
}

/// Redemption `id`, every column of it, as JSON text.
async fn row(database: &TestDatabase, id: i64) -> String {
    use diesel_async::RunQueryDsl;
    #[derive(QueryableByName)]
    struct Json {
        #[diesel(sql_type = Text)]
        row: String,
    }
    diesel::sql_query(
        "SELECT row_to_json(r)::text AS row FROM gift_card_redemptions r WHERE id = $1",
    )
    .bind::<BigInt, _>(id)
    .get_result::<Json>(&mut database.connect().await)
    .await
    .unwrap()
    .row
}

/// What the catalog answers an order service from before the migration that takes the
/// lease of redemption `id`, credited under its code.
fn refused_to_old_code(id: i64) -> String {
    format!(
        "redemption {id} has a code-derived credit reference; an order service from before \
         migration 2026-11-27-000060 cannot credit it"
    )
}

/// (f) During a rolling deploy, order services of the release before still run after the
/// migration; they take a lease by adding one to `attempts` and send the credit under
/// `gift-card:<id>`. Their takes (both statements, verbatim) of a redemption credited under
/// its code are refused by the catalog and change nothing, so it is never credited a second
/// time under another reference; a redemption made before the migration is still theirs to
/// take. The current code's takes go through on both, the refused one included, also
/// twice in a row and with `taken_at` ahead of the clock (a clock set back).
#[tokio::test]
async fn the_release_before_cannot_take_a_redemption_credited_under_its_code() {
    use order_service::gift_cards::credit::{self, Failure};
    let database = migrated_around_target(
        "gift_card_old_takes",
        "INSERT INTO gift_card_codes (code, points, active) \
             VALUES ('WELCOME-100', 100, true), ('RAMADAN-250', 250, true); \
         INSERT INTO gift_card_redemptions (code, client_id, points, attempts, last_error) \
             VALUES ('WELCOME-100', 1001, 100, 1, 'credit answered 503 Service Unavailable')",
    )
    .await;
    let lease = Duration::from_secs(60);
    let mut conn = database.connect().await;
    // A current replica makes a redemption; its first credit fails and the lease is given
    // back with the next try due at once.
    let new = credit::take_new(
        &mut conn,
        "RAMADAN-250",
        1002,
        &250.into(),
        CreditTarget::PointService,
        lease,
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(
        (new.id, new.attempt, new.reference.as_str()),
        (2, 1, "gift-card:RAMADAN-250")
    );
    credit::release(
        &mut conn,
        &new,
        Duration::ZERO,
        &Failure::Failed("credit answered 503 Service Unavailable".into()),
    )
    .await
    .unwrap();
    assert_eq!(
        recorded(&database, "WELCOME-100").await,
        target(None, "gift-card:1")
    );
    // Both due, the new one the most overdue: the old retry pass picks it first.
    database
        .execute(
            "UPDATE gift_card_redemptions SET next_attempt_at = now() - interval '2 minutes' \
                 WHERE id = 2; \
             UPDATE gift_card_redemptions SET next_attempt_at = now() - interval '1 minute' \
                 WHERE id = 1",
        )
        .await;
    let (old_before, new_before) = (row(&database, 1).await, row(&database, 2).await);

    // (1) The release before, on the redemption credited under its code: refused, and
    // nothing changes (the old pass fails on it again next time, until a current replica
    // has taken it).
    for _ in 0..2 {
        let refused = old_take_due(&database).await.unwrap_err();
        assert!(refused.contains(&refused_to_old_code(2)), "{refused}");
    }
    let refused = old_take_locked(&database, 2).await.unwrap_err();
    assert!(refused.contains(&refused_to_old_code(2)), "{refused}");
    assert_eq!(row(&database, 2).await, new_before);
    assert_eq!(row(&database, 1).await, old_before);

    // (2) The release before, on the redemption made before the migration: taken, by its
    // request path and by its retry pass.
    assert_eq!(
        old_take_locked(&database, 1).await.unwrap(),
        OldLease { id: 1, attempt: 2 }
    );
    database
        .execute(
            "UPDATE gift_card_redemptions \
             SET lease_until = NULL, next_attempt_at = now() - interval '3 minutes' WHERE id = 1",
        )
        .await;
    assert_eq!(
        old_take_due(&database).await.unwrap(),
        Some(OldLease { id: 1, attempt: 3 })
    );
    assert_eq!(
        recorded(&database, "WELCOME-100").await,
        target(None, "gift-card:1")
    );
    assert_eq!(row(&database, 2).await, new_before);

    // The current code: its retry pass takes the one the old code was refused (the other
    // is held now), its request path takes it again at once, and once more with its
    // `taken_at` ahead of the clock; and it takes the one made before the migration too.
    let due = credit::take_due(&mut conn, CreditTarget::Legacy, lease)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (due.id, due.attempt, due.target, due.reference.as_str()),
        (2, 2, CreditTarget::PointService, "gift-card:RAMADAN-250")
    );
    for attempt in [3, 4] {
        let locked = credit::take_locked(&mut conn, 2, CreditTarget::Legacy, lease)
            .await
            .unwrap();
        assert_eq!((locked.id, locked.attempt), (2, attempt));
        database
            .execute(
                "UPDATE gift_card_redemptions SET taken_at = now() + interval '1 day' WHERE id = 2",
            )
            .await;
    }
    // Still refused to the release before, whatever the current code did to it.
    let refused = old_take_locked(&database, 2).await.unwrap_err();
    assert!(refused.contains(&refused_to_old_code(2)), "{refused}");
    let locked = credit::take_locked(&mut conn, 1, CreditTarget::Legacy, lease)
        .await
        .unwrap();
    assert_eq!(
        (locked.id, locked.attempt, locked.reference.as_str()),
        (1, 4, "gift-card:1")
    );
    assert_eq!(
        old_take_locked(&database, 1).await.unwrap(),
        OldLease { id: 1, attempt: 5 }
    );
}
