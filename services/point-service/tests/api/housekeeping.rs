//! `point-service housekeeping`: the real binary against the points database. Idempotency
//! keys go once their 24 hours are twice over, published events a week after they were
//! published, and an unpublished event never; no ledger, order, payment or settlement row
//! ever goes; two runs at once remove each key once; the run is recorded and exported by a
//! serving process.

use crate::helpers::*;

/// Runs `point-service housekeeping`: exit code, stdout, stderr.
async fn housekeeping(app: &TestApp) -> (i32, String, String) {
    let mut command = point_service_command(app.database.url(), &["housekeeping"]);
    command.env("RUST_LOG", "off");
    testkit::command::output(command).await
}

/// `n` open checkout orders of Sara's, each with an idempotency key made `age` ago.
fn keyed_orders(n: usize, age: &str, prefix: &str) -> String {
    format!(
        "WITH made AS ( \
             INSERT INTO point_orders (correlation_id, payer_id, recipient_id, status, point_amount, \
                                       money_amount, payment_type, order_type, created_at) \
             SELECT gen_random_uuid(), {SARA}, {OMAR}, 'initial_order', 100, 15, 'checkout', 'transfer', \
                    now() - interval '{age}' \
             FROM generate_series(1, {n}) \
             RETURNING correlation_id) \
         INSERT INTO idempotency_keys (client_id, key, request_hash, correlation_id, created_at) \
         SELECT {SARA}, '{prefix}-' || row_number() OVER (), '\\x00', correlation_id, now() - interval '{age}' \
         FROM made"
    )
}

/// Every money and points table's rows, to compare before and after.
const MONEY: &str = "SELECT ((SELECT count(*) FROM point_entries) * 1000000000 \
    + (SELECT count(*) FROM point_orders) * 1000000 + (SELECT count(*) FROM point_accounts) * 10000 \
    + (SELECT count(*) FROM payment_events) * 100 + (SELECT count(*) FROM settlement_checks) * 10 \
    + (SELECT count(*) FROM internal_credits))::bigint AS n";

#[tokio::test]
async fn old_keys_go_fresh_ones_and_every_money_row_stay() {
    let app = spawn_app().await;
    app.sql(&keyed_orders(3, "48 hours 1 minute", "old")).await;
    app.sql(&keyed_orders(2, "47 hours", "day-old")).await;
    app.sql(&keyed_orders(1, "1 minute", "fresh")).await;
    app.sql(
        "INSERT INTO payment_events (id, type, reference, outcome, received_at) \
         VALUES ('evt_old', 'payment_declined', 'x', 'unknown_order', now() - interval '400 days'); \
         INSERT INTO settlement_checks (day, checked_at, outcome) \
         VALUES (current_date - 400, now() - interval '400 days', 'agrees'); \
         INSERT INTO point_accounts (client_id, created_at) VALUES (4242, now() - interval '400 days')",
    )
    .await;
    // The seed's three entries' events: one published 8 days ago, one 6 days ago, one not.
    app.sql(
        "UPDATE event_outbox SET published_at = now() - interval '8 days' \
         WHERE id = (SELECT min(id) FROM event_outbox); \
         UPDATE event_outbox SET published_at = now() - interval '6 days' \
         WHERE id = (SELECT min(id) + 1 FROM event_outbox)",
    )
    .await;
    let money = app.count(MONEY).await;

    let (code, stdout, stderr) = housekeeping(&app).await;
    assert_eq!(
        (code, stdout.as_str()),
        (
            0,
            "idempotency_keys\t3\nevent_outbox\t1\nexpiry_notices\t0\n"
        ),
        "{stderr}"
    );
    assert_eq!(
        app.count(
            "SELECT count(*) AS n FROM event_outbox \
             WHERE published_at IS NULL OR published_at > now() - interval '7 days'"
        )
        .await,
        2,
        "the event published 6 days ago and the one not published stay"
    );
    assert_eq!(
        app.count("SELECT count(*) AS n FROM idempotency_keys WHERE key LIKE 'old-%'")
            .await,
        0
    );
    assert_eq!(
        app.count("SELECT count(*) AS n FROM idempotency_keys")
            .await,
        3
    );
    assert_eq!(app.count(MONEY).await, money, "a money or points row went");
    // The orders of the removed keys are still whole (the audit checks keys against orders).
    assert_eq!(
        app.count(
            "SELECT count(*) AS n FROM point_orders WHERE created_at < now() - interval '48 hours'"
        )
        .await,
        3
    );
}

#[tokio::test]
async fn two_runs_at_once_both_succeed_and_remove_each_key_once() {
    let app = spawn_app().await;
    app.sql(&keyed_orders(6_000, "3 days", "old")).await;
    app.sql(&keyed_orders(2, "1 hour", "fresh")).await;

    let (first, second) = tokio::join!(housekeeping(&app), housekeeping(&app));
    let removed = |(code, stdout, stderr): &(i32, String, String)| -> i64 {
        assert_eq!(*code, 0, "{stderr}");
        stdout
            .lines()
            .find_map(|line| line.strip_prefix("idempotency_keys\t"))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("unexpected report {stdout:?}"))
    };
    assert_eq!(removed(&first) + removed(&second), 6_000);
    assert_eq!(
        app.count("SELECT count(*) AS n FROM idempotency_keys")
            .await,
        2
    );
    assert_eq!(
        app.count(
            "SELECT count(*) AS n FROM point_orders WHERE payer_id = 1001 AND status \
                          = 'initial_order'"
        )
        .await,
        6_002
    );
}

#[tokio::test]
async fn the_run_is_recorded_and_every_serving_process_exports_it() {
    testkit::metrics::alone_in_the_process();
    const REMOVED: &str = r#"housekeeping_rows_removed{table="idempotency_keys"}"#;
    const LAST_RUN: &str = r#"housekeeping_last_run_timestamp_seconds{table="idempotency_keys"}"#;
    let app = spawn_app().await;
    // Before any run: exported at 0, so "never ran" alerts like "stopped running".
    let before = testkit::metrics::wait_for(&app.client, &app.base, LAST_RUN, 0.0).await;
    assert_eq!(testkit::metrics::value(&before, REMOVED), Some(0.0));
    assert!(
        before.contains("# HELP housekeeping_rows_removed "),
        "{before}"
    );
    assert!(
        before.contains("# HELP housekeeping_last_run_timestamp_seconds "),
        "{before}"
    );

    app.sql(&keyed_orders(5, "1 week", "old")).await;
    let (code, _, stderr) = housekeeping(&app).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        app.count(
            "SELECT rows_removed AS n FROM housekeeping_runs WHERE table_name = 'idempotency_keys' \
                   AND finished_at > now() - interval '1 minute'"
        )
        .await,
        5
    );
    let finished = app
        .count("SELECT EXTRACT(EPOCH FROM finished_at)::bigint AS n FROM housekeeping_runs")
        .await;

    // A replica started now reads the run at once (the first one reads it within a minute).
    let replica = spawn_replica(&app, Options::default()).await;
    let text = testkit::metrics::wait_for(&app.client, &replica, REMOVED, 5.0).await;
    let at = testkit::metrics::value(&text, LAST_RUN).unwrap();
    assert!(
        (at - finished as f64).abs() <= 1.0,
        "{at} against {finished}"
    );
}
