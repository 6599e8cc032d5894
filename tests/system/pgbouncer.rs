//! The services through a real PgBouncer in transaction pooling mode (Debian 12's 1.18, which
//! does not carry prepared statements from one transaction to the next) with
//! `DATABASE_STATEMENT_CACHE=false`: the money paths run concurrently, more client
//! connections than server connections, so that one server connection serves several
//! service connections in turn, and every answer and every ledger row is right.
//!
//! Without vendor/diesel-async's patch (named statements even with the cache off) this fails
//! with `prepared statement "s…" does not exist` or `already exists` (500s).

use std::collections::HashMap;

use e2e::money::{self, CLIENTS};
use e2e::pgbouncer::PgBouncer;
use e2e::stack::{Databases, Stack};
use e2e::{demo_database, run};

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

    let upstream: tokio_postgres::Config = db::testing::admin_url().parse().unwrap();
    let bouncer = PgBouncer::start(
        upstream.get_ports().first().copied().unwrap_or(5432),
        SERVER_CONNECTIONS,
    )
    .await;
    let stack = Stack::start_with(
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
    // Each point order charged once and credited once, each card order credited once,
    // each gift code credited once.
    assert_eq!(
        money::count(
            points_db.url(),
            "SELECT count(*) AS n FROM point_entries WHERE order_correlation_id IS NOT NULL"
        )
        .await,
        3 * flows
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
    let audit = run("point-service", &["audit"], points_db.url(), &[]).await;
    assert!(
        audit.status.success(),
        "audit: {}",
        String::from_utf8_lossy(&audit.stdout)
    );

    // The sharing really happened: for each database, more service connections went
    // through the pooler than it ever had server connections.
    let per_database = |rows: Vec<HashMap<String, String>>| {
        let mut n: HashMap<String, usize> = HashMap::new();
        for row in rows {
            *n.entry(row["database"].clone()).or_default() += 1;
        }
        n
    };
    let clients = per_database(bouncer.admin("SHOW CLIENTS").await);
    let servers = per_database(bouncer.admin("SHOW SERVERS").await);
    for database in [auth_db.name(), points_db.name(), catalog_db.name()] {
        let (c, s) = (
            clients.get(database).copied().unwrap_or(0),
            servers.get(database).copied().unwrap_or(0),
        );
        assert!(
            s <= SERVER_CONNECTIONS as usize && c > s,
            "{database}: {c} client connections over {s} server connections"
        );
    }
}
