//! `auth-service housekeeping`: the real binary against the auth database. OTP events and
//! client events go once the limits' hour is twice over, login codes a lifetime after their
//! expiry; accounts and legacy tokens never go; two runs at once remove each row once; the
//! run is recorded and exported by a serving process; and the tables stop growing under a
//! long run of failed logins.

use crate::helpers::*;

const OMAR_PHONE: &str = "+966500000002";

/// Runs `auth-service housekeeping`: exit code, stdout, stderr.
async fn housekeeping(app: &TestApp) -> (i32, String, String) {
    let binary = env!("CARGO_BIN_EXE_auth-service");
    let mut command = testkit::command::service(binary, app.database.url(), &["housekeeping"]);
    command.env("RUST_LOG", "off");
    testkit::command::output(command).await
}

async fn count(app: &TestApp, query: &str) -> i64 {
    app.database.count(query).await
}

/// `n` OTP events made `age` ago.
fn otp_events(n: usize, age: &str) -> String {
    format!(
        "INSERT INTO otp_events (kind, phone, ip, created_at) \
         SELECT 'code_tried', '{OMAR_PHONE}', '10.0.0.1', now() - interval '{age}' FROM generate_series(1, {n})"
    )
}

/// `n` client lookups by Noura made `age` ago.
fn client_events(n: usize, age: &str) -> String {
    format!(
        "INSERT INTO client_events (kind, client_id, created_at) \
         SELECT 'client_lookup', {NOURA}, now() - interval '{age}' FROM generate_series(1, {n})"
    )
}

/// A login code of `client` that expires at `now() + offset`.
fn code(client: i64, offset: &str) -> String {
    format!(
        "INSERT INTO otp_codes (client_id, code_hash, expires_at, created_at, sent_at) \
         VALUES ({client}, '\\x00', now() + interval '{offset}', \
         now() + interval '{offset}' - interval '3 minutes', now())"
    )
}

const KEPT: &str = "SELECT ((SELECT count(*) FROM clients) * 1000 + (SELECT count(*) FROM legacy_tokens) * 10 \
    + (SELECT count(*) FROM addresses))::bigint AS n";

#[tokio::test]
async fn old_events_and_dead_codes_go_fresh_ones_and_accounts_stay() {
    let app = spawn_app().await;
    app.sql(&otp_events(3, "2 hours 1 minute")).await;
    app.sql(&otp_events(2, "1 hour 59 minutes")).await;
    app.sql(&otp_events(1, "1 minute")).await;
    app.sql(&client_events(2, "3 hours")).await;
    app.sql(&client_events(1, "10 minutes")).await;
    // Omar's code expired 10 minutes ago: gone. Noura's a minute ago: kept (within a
    // lifetime of its expiry). Sara's lives.
    app.sql(&code(OMAR, "-10 minutes")).await;
    app.sql(&code(NOURA, "-1 minute")).await;
    app.sql(&code(SARA, "2 minutes")).await;
    app.sql("UPDATE legacy_tokens SET created_at = now() - interval '400 days'")
        .await;
    let kept = count(&app, KEPT).await;

    let (code, stdout, stderr) = housekeeping(&app).await;
    assert_eq!(
        (code, stdout.as_str()),
        (0, "otp_events\t3\nclient_events\t2\notp_codes\t1\n"),
        "{stderr}"
    );
    assert_eq!(count(&app, "SELECT count(*) AS n FROM otp_events").await, 3);
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM client_events").await,
        1
    );
    assert_eq!(
        count(
            &app,
            "SELECT count(*) AS n FROM otp_codes WHERE client_id IN (1001, 1003)"
        )
        .await,
        2
    );
    assert_eq!(count(&app, "SELECT count(*) AS n FROM otp_codes").await, 2);
    assert_eq!(
        count(&app, KEPT).await,
        kept,
        "an account, token or address went"
    );
}

#[tokio::test]
async fn two_runs_at_once_both_succeed_and_remove_each_row_once() {
    let app = spawn_app().await;
    app.sql(&otp_events(7_500, "5 hours")).await;
    app.sql(&otp_events(3, "5 minutes")).await;

    let (first, second) = tokio::join!(housekeeping(&app), housekeeping(&app));
    let removed = |(code, stdout, stderr): &(i32, String, String)| -> i64 {
        assert_eq!(*code, 0, "{stderr}");
        stdout
            .lines()
            .find_map(|line| line.strip_prefix("otp_events\t"))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("unexpected report {stdout:?}"))
    };
    assert_eq!(removed(&first) + removed(&second), 7_500);
    assert_eq!(count(&app, "SELECT count(*) AS n FROM otp_events").await, 3);
}

#[tokio::test]
async fn the_run_is_recorded_and_every_serving_process_exports_it() {
    testkit::metrics::alone_in_the_process();
    const REMOVED: &str = r#"housekeeping_rows_removed{table="otp_events"}"#;
    const LAST_RUN: &str = r#"housekeeping_last_run_timestamp_seconds{table="otp_events"}"#;
    let app = spawn_app().await;
    // Before any run every table is exported at 0, so "never ran" alerts like "stopped".
    let before = testkit::metrics::wait_for(&app.client, &app.base, LAST_RUN, 0.0).await;
    for table in ["otp_events", "client_events", "otp_codes"] {
        let series = format!("housekeeping_rows_removed{{table=\"{table}\"}}");
        assert_eq!(
            testkit::metrics::value(&before, &series),
            Some(0.0),
            "{table}"
        );
    }
    assert!(
        before.contains("# HELP housekeeping_rows_removed "),
        "{before}"
    );

    app.sql(&otp_events(4, "1 day")).await;
    let (code, _, stderr) = housekeeping(&app).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        count(
            &app,
            "SELECT rows_removed AS n FROM housekeeping_runs WHERE table_name = 'otp_events' \
                     AND finished_at > now() - interval '1 minute'"
        )
        .await,
        4
    );
    let finished = count(
        &app,
        "SELECT EXTRACT(EPOCH FROM finished_at)::bigint AS n FROM housekeeping_runs WHERE table_name = 'otp_events'",
    )
    .await;

    let replica = spawn_replica(&app);
    let text = testkit::metrics::wait_for(&app.client, &replica, REMOVED, 4.0).await;
    let at = testkit::metrics::value(&text, LAST_RUN).unwrap();
    assert!(
        (at - finished as f64).abs() <= 1.0,
        "{at} against {finished}"
    );
}

/// `route` (`paths::reset_otp` or `paths::verify_otp`) with `query`, its `+` encoded.
async fn get(app: &TestApp, route: fn() -> String, query: &str) -> u16 {
    let path = paths::with_query(route(), &query.replace('+', "%2B"));
    app.get(&path, None).await.status().as_u16()
}

/// The issue's own case: failed logins day after day (a code asked for and guessed wrong
/// until it dies, strangers' phones tried). Each round's rows are moved past their windows
/// (as time would), housekeeping runs, and the tables hold one round's rows at most.
#[tokio::test]
async fn the_otp_tables_stop_growing_under_a_long_run_of_failed_logins() {
    let app = spawn_app().await;
    // Per round: one SMS sent, five wrong codes tried, three unknown phones.
    const PER_ROUND: i64 = 1 + 5 + 3;
    for round in 1..=10 {
        assert_eq!(
            get(
                &app,
                paths::reset_otp,
                &format!("contact_phone={OMAR_PHONE}")
            )
            .await,
            200,
            "round {round}"
        );
        let sent = app.codes_sent_to(OMAR_PHONE).pop().unwrap();
        let wrong = format!("{:04}", (sent.parse::<u32>().unwrap() + 1) % 10_000);
        for _ in 0..5 {
            let query = format!("contact_phone={OMAR_PHONE}&code={wrong}");
            assert_eq!(
                get(&app, paths::verify_otp, &query).await,
                400,
                "round {round}"
            );
        }
        for stranger in 0..3 {
            let query = format!("contact_phone=+96655{round:03}{stranger:04}&code=1111");
            assert_eq!(
                get(&app, paths::verify_otp, &query).await,
                400,
                "round {round}"
            );
        }
        assert_eq!(
            count(&app, "SELECT count(*) AS n FROM otp_events").await,
            PER_ROUND,
            "round {round}: the table holds this round's events only"
        );
        assert_eq!(count(&app, "SELECT count(*) AS n FROM otp_codes").await, 1);
        app.sql(
            "UPDATE otp_events SET created_at = created_at - interval '3 hours'; \
             UPDATE otp_codes SET created_at = created_at - interval '1 hour', \
                                  expires_at = expires_at - interval '1 hour'",
        )
        .await;
        let (code, _, stderr) = housekeeping(&app).await;
        assert_eq!(code, 0, "{stderr}");
    }
    assert_eq!(count(&app, "SELECT count(*) AS n FROM otp_events").await, 0);
    assert_eq!(count(&app, "SELECT count(*) AS n FROM otp_codes").await, 0);
}
