//! `order-service housekeeping`: the real binary against the catalog database. Wrong
//! gift-card guesses go once the limits' hour is twice over; redemptions (points), codes and
//! the operators' audit trail never go; two runs at once remove each row once; the run is
//! recorded and exported by a serving process; and the tries table stops growing under a
//! long run of wrong guesses.

use crate::helpers::*;

/// Runs `order-service housekeeping` on `database_url`: exit code, stdout, stderr.
async fn housekeeping(database_url: &str) -> (i32, String, String) {
    let binary = env!("CARGO_BIN_EXE_order-service");
    let mut command = testkit::command::service(binary, database_url, &["housekeeping"]);
    command.env("RUST_LOG", "off");
    testkit::command::output(command).await
}

async fn count(app: &TestApp, query: &str) -> i64 {
    app.database.count(query).await
}

/// `n` wrong guesses by client 77, made `age` ago.
fn tries(n: usize, age: &str) -> String {
    format!(
        "INSERT INTO gift_card_tries (client_id, ip, created_at) \
         SELECT 77, '10.0.0.1', now() - interval '{age}' FROM generate_series(1, {n})"
    )
}

#[tokio::test]
async fn old_guesses_go_fresh_ones_and_every_points_row_stay() {
    let app = spawn_app().await;
    app.sql(&tries(3, "2 hours 1 minute")).await;
    app.sql(&tries(2, "1 hour 59 minutes")).await;
    app.sql(&tries(1, "5 minutes")).await;
    // Points and audit rows far older than any window.
    app.sql(
        "INSERT INTO gift_card_redemptions (code, client_id, points, status, created_at, credited_at, \
                                            credit_target, credit_reference, answered_at) \
         VALUES ('WELCOME-100', 1001, 100, 'credited', now() - interval '400 days', \
                 now() - interval '400 days', 'point_service', 'gift-card:WELCOME-100', now() - interval '400 days'); \
         INSERT INTO operator_audit (operator_id, role, action, service_ids, before, after, created_at) \
         VALUES ('7', 'admin', 'update', '{1}', '{}', '{}', now() - interval '400 days')",
    )
    .await;
    // Events: published 8 days ago (goes), 6 days ago (stays), never (stays, however old).
    app.sql(
        "INSERT INTO event_outbox (type, client_id, data, occurred_at, written_at, published_at) VALUES \
         ('giftcode.redeemed', 1001, '{}', now(), now() - interval '9 days', now() - interval '8 days'), \
         ('giftcode.redeemed', 1001, '{}', now(), now() - interval '7 days', now() - interval '6 days'), \
         ('giftcode.redeemed', 1001, '{}', now(), now() - interval '30 days', NULL)",
    )
    .await;

    let (code, stdout, stderr) = housekeeping(app.database.url()).await;
    assert_eq!(
        (code, stdout.as_str()),
        (0, "gift_card_tries\t3\nevent_outbox\t1\n"),
        "{stderr}"
    );
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM gift_card_tries").await,
        3
    );
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM gift_card_tries WHERE created_at < now() - interval '2 hours'").await,
        0
    );
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM gift_card_redemptions").await,
        1
    );
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM operator_audit").await,
        1
    );
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM gift_card_codes").await,
        3
    );
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM event_outbox").await,
        2,
        "the event published 6 days ago and the one never published stay"
    );

    // Nothing left to do is a run too: it succeeds and says 0.
    let (code, stdout, _) = housekeeping(app.database.url()).await;
    assert_eq!(
        (code, stdout.as_str()),
        (0, "gift_card_tries\t0\nevent_outbox\t0\n")
    );
}

#[tokio::test]
async fn two_runs_at_once_both_succeed_and_remove_each_row_once() {
    let app = spawn_app().await;
    // Several batches' worth, so the two runs' batches meet.
    app.sql(&tries(7_500, "3 hours")).await;
    app.sql(&tries(4, "10 minutes")).await;

    let (first, second) = tokio::join!(
        housekeeping(app.database.url()),
        housekeeping(app.database.url())
    );
    let removed = |(code, stdout, stderr): &(i32, String, String)| -> i64 {
        assert_eq!(*code, 0, "{stderr}");
        stdout
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("gift_card_tries\t"))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("unexpected report {stdout:?}"))
    };
    assert_eq!(removed(&first) + removed(&second), 7_500);
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM gift_card_tries").await,
        4
    );
}

#[tokio::test]
async fn the_run_is_recorded_and_a_serving_process_exports_it() {
    testkit::metrics::alone_in_the_process();
    // No replica yet: the only process exporting the gauges is the one started after the run.
    let database = testkit::seed::seeded_database(
        catalog_db::MIGRATIONS,
        order_service::seed::load,
        &fixture(),
    )
    .await;
    database.execute(&tries(6, "1 day")).await;
    let (code, _, stderr) = housekeeping(database.url()).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        database
            .count("SELECT rows_removed AS n FROM housekeeping_runs WHERE table_name = 'gift_card_tries' \
                    AND finished_at > now() - interval '1 minute'")
            .await,
        6
    );
    let finished = database
        .count("SELECT EXTRACT(EPOCH FROM finished_at)::bigint AS n FROM housekeeping_runs")
        .await;

    // The replica reads the runs as it starts.
    let replica = start(database.url(), "http://127.0.0.1:9", &Options::default());
    let client = reqwest::Client::new();
    let text = testkit::metrics::wait_for(
        &client,
        &replica,
        r#"housekeeping_rows_removed{table="gift_card_tries"}"#,
        6.0,
    )
    .await;
    let at = testkit::metrics::value(
        &text,
        r#"housekeeping_last_run_timestamp_seconds{table="gift_card_tries"}"#,
    )
    .unwrap();
    assert!(
        (at - finished as f64).abs() <= 1.0,
        "{at} against {finished}"
    );
    assert!(text.contains("# HELP housekeeping_rows_removed "), "{text}");
    assert!(
        text.contains("# HELP housekeeping_last_run_timestamp_seconds "),
        "{text}"
    );
}

/// The issue's own case: a client keeps guessing wrong codes, day after day. Each round's
/// guesses are moved past the limits' hour (as time would), housekeeping runs, and the table
/// holds one round's rows at most, however many rounds there are.
#[tokio::test]
async fn the_tries_table_stops_growing_under_a_long_run_of_wrong_guesses() {
    let app = spawn_app().await;
    const PER_ROUND: i64 = 8; // under the 10-per-hour limit, so every guess is looked at
    let mut removed = 0;
    for round in 1..=12 {
        for guess in 0..PER_ROUND {
            let (status, _) = app.redeem(1001, &format!("WRONG-{round}-{guess}")).await;
            assert_eq!(
                status, 404,
                "round {round}: a wrong code is a 404 while under the limit"
            );
        }
        let held = count(&app, "SELECT count(*) AS n FROM gift_card_tries").await;
        assert_eq!(
            held, PER_ROUND,
            "round {round}: the table holds this round's guesses only"
        );
        app.sql("UPDATE gift_card_tries SET created_at = created_at - interval '3 hours'")
            .await;
        let (code, stdout, stderr) = housekeeping(app.database.url()).await;
        assert_eq!(code, 0, "{stderr}");
        // Read leniently: a run that removed nothing shows as the next round's growth.
        removed += stdout
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("gift_card_tries\t"))
            .and_then(|n| n.parse::<i64>().ok())
            .unwrap_or(0);
    }
    assert_eq!(removed, 12 * PER_ROUND);
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM gift_card_tries").await,
        0
    );
}
