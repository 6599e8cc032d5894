//! The services through a real PgBouncer in transaction pooling mode (Debian 12's 1.18, which
//! does not carry prepared statements from one transaction to the next) with
//! `DATABASE_STATEMENT_CACHE=false`: the money paths run concurrently, more client
//! connections than server connections, so that one server connection serves several
//! service connections in turn, and every answer and every ledger row is right.
//!
//! Without vendor/diesel-async's patch (named statements even with the cache off) this fails
//! with `prepared statement "s…" does not exist` or `already exists` (500s).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use e2e::money::{self, CLIENTS};
use e2e::pgbouncer::{self, PgBouncer};
use e2e::stack::{Databases, Stack, call};
use e2e::{Service, demo, demo_database, run};
use serde_json::json;

/// Server connections per database: fewer than the services' client connections.
const SERVER_CONNECTIONS: u32 = 2;
/// Concurrent flows per round (each: a point order, a card order captured by webhook, a
/// gift code), and rounds.
const FLOWS: usize = 8;
const ROUNDS: usize = 3;

#[tokio::test]
async fn the_money_paths_work_through_pgbouncer_in_transaction_mode() {
    let auth_db = demo_database(&["auth-service"], "auth").await;
    let points_db = demo_database(&["point-service"], "points").await;
    let catalog_db = demo_database(&["order-service", "operator-service"], "catalog").await;
    money::fund(points_db.url(), 100_000).await;
    money::add_gift_codes(catalog_db.url(), "PGB", FLOWS * ROUNDS, "12.5").await;

    let bouncer = PgBouncer::start(upstream_port(), SERVER_CONNECTIONS).await;
    // Three batchers in the point service, so that three point orders can each hold a
    // connection at once (below).
    let stack = Stack::start_with_extra(
        &Databases {
            auth: bouncer.url(auth_db.name()),
            points: bouncer.url(points_db.name()),
            catalog: bouncer.url(catalog_db.name()),
        },
        &[
            ("DATABASE_STATEMENT_CACHE", "false"),
            ("DATABASE_POOL_SIZE", "6"),
            ("HTTP_WORKERS", "2"),
        ],
        &[("POINT_ORDER_BATCH_LANES", "3")],
        &[],
    )
    .await;
    let http = reqwest::Client::new();
    let (order, points) = (stack.order.base.clone(), stack.points.base.clone());
    // What the services logged at error level, for a failure's message.
    let errors = || {
        [&stack.points, &stack.order, &stack.auth]
            .iter()
            .flat_map(|s| s.logs())
            .filter(|l| l.contains("\"ERROR\""))
            .take(5)
            .collect::<Vec<_>>()
            .join("\n")
    };

    // More point-service connections than server connections, made certain rather than
    // left to the load: the test holds Sara's account row, and three clients pay her, one in
    // each of the point service's three batchers (a payer's batcher is its id modulo 3), so
    // that each batch keeps its pooled connection while it waits; the test lets go once
    // PgBouncer has them all as clients. The pool keeps its connections, so the flows below
    // run over more client connections than server connections.
    let sharing = SERVER_CONNECTIONS as usize + 1;
    let (holder, connection) = tokio_postgres::connect(points_db.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    holder
        .batch_execute("BEGIN; SELECT 1 FROM point_accounts WHERE client_id = 1001 FOR UPDATE")
        .await
        .unwrap();
    let waiting = futures_util::future::join_all((0..sharing).map(|i| {
        let (http, order) = (&http, &order);
        async move {
            let (_, payer) = CLIENTS[1 + i];
            money::point_order(http, order, payer, CLIENTS[0].0, &format!("pgb-held-{i}")).await
        }
    }));
    let release = async {
        let started = Instant::now();
        while per_database(bouncer.admin("SHOW CLIENTS").await)
            .get(points_db.name())
            .copied()
            .unwrap_or(0)
            < sharing
        {
            assert!(
                started.elapsed() < Duration::from_secs(4),
                "the point service did not open {sharing} connections"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        holder.batch_execute("COMMIT").await.unwrap();
    };
    let (answers, ()) = tokio::join!(waiting, release);
    for (status, body) in answers {
        assert_eq!(status, 200, "{body}");
    }

    let mut orders = Vec::new();
    for round in 0..ROUNDS {
        let flows = (0..FLOWS).map(|i| {
            let (http, order, points, errors) = (&http, &order, &points, &errors);
            let (_, token) = CLIENTS[i % CLIENTS.len()];
            let (friend, _) = CLIENTS[(i + 1) % CLIENTS.len()];
            async move {
                let key = format!("pgb-{round}-{i}");
                let (status, paid) = money::point_order(http, order, token, friend, &key).await;
                assert_eq!(status, 200, "point order: {paid}\n{}", errors());
                assert_eq!(paid["status"], "successful", "{paid}");
                // The app's retry of the same order: the first answer again, nothing charged.
                let (status, again) = money::point_order(http, order, token, friend, &key).await;
                assert_eq!((status, &again), (200, &paid));

                let (created, payment) = money::card_order(http, order, token).await;
                let event = money::event(
                    &format!("pgb-evt-{round}-{i}"),
                    "payment_captured",
                    &created,
                    &payment,
                );
                let (status, text) = money::send_event(http, points, &event).await;
                assert_eq!(status, 200, "webhook: {text}\n{}", errors());

                let code = format!("PGB-{:04}", round * FLOWS + i);
                let (status, redeemed) = money::redeem(http, order, token, &code).await;
                assert_eq!(status, 200, "gift code {code}: {redeemed}\n{}", errors());
                (
                    token,
                    paid["correlation_id"].as_str().unwrap().to_owned(),
                    created["correlation_id"].as_str().unwrap().to_owned(),
                )
            }
        });
        orders.extend(futures_util::future::join_all(flows).await);
    }

    for (token, paid, carded) in &orders {
        for id in [paid, carded] {
            let seen = money::order_status(&http, &order, token, id).await;
            assert_eq!(seen["status"], "successful", "{seen}");
        }
    }
    let flows = (FLOWS * ROUNDS) as i64;
    // Each point order (the flows' and the held ones) charged once and credited once, each
    // card order credited once, each gift code credited once.
    assert_eq!(
        money::count(
            points_db.url(),
            "SELECT count(*) AS n FROM point_entries WHERE order_correlation_id IS NOT NULL"
        )
        .await,
        3 * flows + 2 * sharing as i64
    );
    assert_eq!(
        money::count(
            catalog_db.url(),
            "SELECT count(*) AS n FROM gift_card_redemptions WHERE status = 'credited'"
        )
        .await,
        flows
    );
    assert_eq!(
        money::count(
            points_db.url(),
            "SELECT count(*) AS n FROM point_entries WHERE reference LIKE 'gift-card:%'"
        )
        .await,
        flows
    );
    // The command-line tools through the pooler too, as CronJobs beside the pooled
    // services would run them: they honour DATABASE_STATEMENT_CACHE.
    let fixture = e2e::repo_root().join("deploy/fixtures/demo.json");
    let no_cache = [("DATABASE_STATEMENT_CACHE", "false")];
    for (service, url, args) in [
        (
            "point-service",
            bouncer.url(points_db.name()),
            vec!["audit"],
        ),
        (
            "point-service",
            bouncer.url(points_db.name()),
            vec!["unapplied-captures"],
        ),
        (
            "auth-service",
            bouncer.url(auth_db.name()),
            vec!["seed", fixture.to_str().unwrap()],
        ),
        (
            "auth-service",
            bouncer.url(auth_db.name()),
            vec!["wait-for-migrations"],
        ),
    ] {
        let output = run(service, &args, &url, &no_cache).await;
        assert!(
            output.status.success(),
            "{service} {args:?} through PgBouncer: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    // The sharing really happened: the point service's connections outnumber the server
    // connections PgBouncer ever had for its database.
    let clients = per_database(bouncer.admin("SHOW CLIENTS").await);
    let servers = per_database(bouncer.admin("SHOW SERVERS").await);
    let (c, s) = (
        clients.get(points_db.name()).copied().unwrap_or(0),
        servers.get(points_db.name()).copied().unwrap_or(0),
    );
    assert!(
        s <= SERVER_CONNECTIONS as usize && c >= sharing,
        "{c} client connections over {s} server connections"
    );
}

/// Rows of PgBouncer's `SHOW CLIENTS` or `SHOW SERVERS`, counted per database.
fn per_database(rows: Vec<HashMap<String, String>>) -> HashMap<String, usize> {
    let mut n: HashMap<String, usize> = HashMap::new();
    for row in rows {
        *n.entry(row["database"].clone()).or_default() += 1;
    }
    n
}

/// The upstream PostgreSQL server's port (the test server's).
fn upstream_port() -> u16 {
    let upstream: tokio_postgres::Config = db::testing::admin_url().parse().unwrap();
    upstream.get_ports().first().copied().unwrap_or(5432)
}

/// The auth service (straight to its database) and the point service through `bouncer`,
/// as the deployment's PgBouncer component runs them.
async fn points_behind(
    bouncer: &PgBouncer,
    auth_db: &db::testing::TestDatabase,
    points_db: &db::testing::TestDatabase,
) -> (Service, Service) {
    let auth = Service::start("auth-service", auth_db.url(), &[]).await;
    let points = Service::start(
        "point-service",
        &bouncer.url(points_db.name()),
        &[
            ("DATABASE_STATEMENT_CACHE", "false"),
            ("AUTH_SERVICE_URL", &auth.base),
        ],
    )
    .await;
    (auth, points)
}

/// Sara's balance straight from the point service: `(status, body)`.
async fn balance(http: &reqwest::Client, points: &Service) -> (u16, serde_json::Value) {
    call(
        http,
        "GET",
        &format!("{}/api/v2/client/points", points.base),
        Some(demo::SARA),
        &[],
        None,
    )
    .await
}

/// Every server connection taken (the deployment's PgBouncer with one server connection,
/// held by the test in an open transaction): a request queues at the pooler until its
/// `query_wait_timeout` (the deployment's, 5 s) and is answered the spec's busy 503 in
/// envelope B, not held for PgBouncer's default 120 s nor answered 500.
#[tokio::test]
async fn a_request_queued_behind_taken_server_connections_gets_the_busy_503_within_the_pools_wait()
{
    let auth_db = demo_database(&["auth-service"], "auth").await;
    let points_db = demo_database(&["point-service"], "points").await;
    let bouncer = PgBouncer::start(upstream_port(), 1).await;
    let (_auth, points) = points_behind(&bouncer, &auth_db, &points_db).await;
    let http = reqwest::Client::new();
    let (status, body) = balance(&http, &points).await;
    assert_eq!(status, 200, "{body}");

    let (holder, connection) =
        tokio_postgres::connect(&bouncer.url(points_db.name()), tokio_postgres::NoTls)
            .await
            .unwrap();
    tokio::spawn(connection);
    holder.batch_execute("BEGIN; SELECT 1").await.unwrap();

    let wait = Duration::from_secs(
        pgbouncer::deployment_setting("query_wait_timeout")
            .expect("the deployment sets query_wait_timeout")
            .parse()
            .unwrap(),
    );
    let started = Instant::now();
    let (status, body) = balance(&http, &points).await;
    let took = started.elapsed();
    assert_eq!(status, 503, "{body}");
    assert_eq!(
        body,
        json!({"success": false, "error": {"code": "SERVICE_UNAVAILABLE", "message": db::BUSY_MESSAGE}})
    );
    // PgBouncer's own answer, after its wait (plus at most the pool's check of an idle
    // connection, db::CHECK_TIMEOUT, and PgBouncer's once-a-third-of-a-second sweep).
    assert!(
        took >= wait && took < wait + db::CHECK_TIMEOUT + Duration::from_secs(2),
        "answered after {took:?}; query_wait_timeout is {wait:?}"
    );
    // The 503 was PgBouncer's query_wait_timeout: the service's line of it (written before
    // the answer, read off its pipe by the harness some time after).
    points
        .log()
        .wait_for("naming PgBouncer's query_wait_timeout", |l| {
            l.contains("query_wait_timeout")
        })
        .await;

    // The server connection free again: answered as before.
    holder.batch_execute("COMMIT").await.unwrap();
    let (status, body) = balance(&http, &points).await;
    assert_eq!(status, 200, "{body}");
}

/// PgBouncer restarted (as a rollout of its Deployment does) between two requests: every
/// connection the service's pool holds was closed by the old process, and the next
/// request, a read and then a write, is answered as if nothing happened.
#[tokio::test]
async fn after_a_pgbouncer_restart_the_next_requests_succeed() {
    let auth_db = demo_database(&["auth-service"], "auth").await;
    let points_db = demo_database(&["point-service"], "points").await;
    money::fund(points_db.url(), 1_000).await;
    let mut bouncer = PgBouncer::start(upstream_port(), 2).await;
    let (_auth, points) = points_behind(&bouncer, &auth_db, &points_db).await;
    let http = reqwest::Client::new();
    for round in 0..3 {
        let (status, body) = balance(&http, &points).await;
        assert_eq!(status, 200, "round {round}: {body}");
        bouncer.restart().await;
        let (status, body) = balance(&http, &points).await;
        assert_eq!(status, 200, "round {round}, read after the restart: {body}");
        bouncer.restart().await;
        let (status, body) = money::point_order(
            &http,
            &points.base,
            demo::SARA,
            CLIENTS[1].0,
            &format!("restart-{round}"),
        )
        .await;
        assert_eq!(
            status, 200,
            "round {round}, write after the restart: {body}"
        );
    }
}

/// `statement_timeout` and `lock_timeout` in milliseconds as PgBouncer hands its server
/// connection for `database` to a client that sets nothing itself, as a service's pooled
/// connection is after its start.
async fn server_timeouts(bouncer: &PgBouncer, database: &str) -> (String, String) {
    let (client, connection) =
        tokio_postgres::connect(&bouncer.url(database), tokio_postgres::NoTls)
            .await
            .unwrap();
    tokio::spawn(connection);
    let rows = client
        .simple_query(
            "SELECT name, setting FROM pg_settings \
             WHERE name IN ('statement_timeout', 'lock_timeout') ORDER BY name DESC",
        )
        .await
        .unwrap();
    let values: Vec<String> = rows
        .into_iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(1).map(str::to_owned),
            _ => None,
        })
        .collect();
    (values[0].clone(), values[1].clone())
}

/// The command-line tools run through PgBouncer in transaction mode (as `kubectl exec` into
/// a pooled service's pod runs them) with one server connection per database, so that the
/// tool and the services surely share it: after each tool the server connection still has
/// the services' timeouts. A tool's own "no timeout" set as session state would have
/// stayed on it, and every service transaction after it would run without a timeout.
#[tokio::test]
async fn the_command_line_tools_leave_the_server_connections_timeouts_as_they_found_them() {
    let auth_db = demo_database(&["auth-service"], "auth").await;
    let points_db = demo_database(&["point-service"], "points").await;
    let bouncer = PgBouncer::start(upstream_port(), 1).await;
    let service = db::PoolSettings::new("postgres://unused@127.0.0.1/unused", 2);
    let expected = (
        service.statement_timeout.as_millis().to_string(),
        service.lock_timeout.as_millis().to_string(),
    );
    for database in [auth_db.name(), points_db.name()] {
        assert_eq!(
            server_timeouts(&bouncer, database).await,
            expected,
            "before any tool ran"
        );
    }

    let fixture = e2e::repo_root().join("deploy/fixtures/demo.json");
    let no_cache = [("DATABASE_STATEMENT_CACHE", "false")];
    for (service, database, args) in [
        ("auth-service", auth_db.name(), vec!["migrate"]),
        (
            "auth-service",
            auth_db.name(),
            vec!["seed", fixture.to_str().unwrap()],
        ),
        ("auth-service", auth_db.name(), vec!["wait-for-migrations"]),
        ("point-service", points_db.name(), vec!["migrate"]),
        ("point-service", points_db.name(), vec!["audit"]),
        (
            "point-service",
            points_db.name(),
            vec!["unapplied-captures"],
        ),
    ] {
        let output = run(service, &args, &bouncer.url(database), &no_cache).await;
        assert!(
            output.status.success(),
            "{service} {args:?} through PgBouncer: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(
            server_timeouts(&bouncer, database).await,
            expected,
            "the server connection's timeouts after {service} {args:?}"
        );
    }
    // One server connection per database the whole time: the tools and the checks above
    // shared it.
    let servers = per_database(bouncer.admin("SHOW SERVERS").await);
    for database in [auth_db.name(), points_db.name()] {
        assert_eq!(servers.get(database).copied(), Some(1), "{servers:?}");
    }
}
