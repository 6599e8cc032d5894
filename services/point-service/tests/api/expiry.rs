//! `point-service expire-points`: a client's points expire once their date (the balance's
//! `pointsExpirationDate`) has passed, exactly once per client and date, whatever runs twice,
//! at once, or dies half way, and whatever spends or earns race it.
//!
//! A real run expires only dates the database's clock has passed, so these tests move the
//! fixture's ledger a year back (`spawn`): Sara holds 700.25 points; her newest earn is
//! 22:30 UTC on 31 March 2025, 1 April in Riyadh, so with 365 inactivity days her date is
//! 2026-04-01: they expire on 2 April 2026.

use std::ops::ControlFlow;
use std::process::Stdio;
use std::time::Duration;

use bigdecimal::BigDecimal;
use chrono::NaiveDate;
use diesel_async::{AsyncPgConnection, SimpleAsyncConnection};
use futures_util::future::join_all;
use point_service::expiry::job::{self, Outcome, Summary};
use point_service::ledger;
use point_service::reports::audit;
use serde_json::json;

use crate::helpers::*;

const SARAS_DATE: &str = "2026-04-01";
const THE_DAY_AFTER: &str = "2026-04-02";

/// The app with its ledger a year older (see the module's comment).
async fn spawn() -> TestApp {
    let app = spawn_app().await;
    app.a_year_earlier().await;
    app
}

fn day(text: &str) -> NaiveDate {
    text.parse().unwrap()
}

fn decimal(text: &str) -> BigDecimal {
    text.parse().unwrap()
}

fn options(today: &str) -> job::Options {
    job::Options {
        today: Some(day(today)),
        ..today_by_the_database()
    }
}

/// A real run as of today by the database's clock.
fn today_by_the_database() -> job::Options {
    job::Options {
        today: None,
        batch_size: job::DEFAULT_BATCH_SIZE,
        dry_run: false,
    }
}

/// One run of the job as of `today` on a connection of its own.
async fn run(app: &TestApp, options: job::Options) -> Summary {
    let mut conn = app.database.connect().await;
    job::run(&mut conn, options, |_| ControlFlow::Continue(()))
        .await
        .unwrap()
}

/// Clients `ids` (none of them known before), each holding `100.1234 + id % 7` points from
/// one earn at `earned`.
async fn holders(app: &TestApp, ids: std::ops::RangeInclusive<i64>, earned: &str) {
    let (first, last) = (ids.start(), ids.end());
    app.sql(&format!(
        "INSERT INTO point_accounts (client_id, balance)
           SELECT g, 100.1234 + g % 7 FROM generate_series({first}, {last}) g;
         INSERT INTO point_entries (client_id, kind, points, created_at)
           SELECT g, 'earn', 100.1234 + g % 7, '{earned}' FROM generate_series({first}, {last}) g;"
    ))
    .await;
}

/// Appends an entry at `at` and moves the cached balance with it.
async fn entry(app: &TestApp, client: i64, kind: &str, points: &str, at: &str) {
    app.sql(&format!(
        "INSERT INTO point_accounts (client_id) VALUES ({client}) ON CONFLICT DO NOTHING;
         INSERT INTO point_entries (client_id, kind, points, created_at) VALUES ({client}, '{kind}', {points}, '{at}');
         UPDATE point_accounts SET balance = balance + {points} WHERE client_id = {client};"
    ))
    .await;
}

async fn expiry_entries(app: &TestApp, client: i64) -> i64 {
    app.count(&format!(
        "SELECT count(*) AS n FROM point_entries WHERE client_id = {client} AND kind = 'expiry'"
    ))
    .await
}

/// Clients with more than one expiry entry for one date, or a balance that is not zero
/// after their expiry: both must stay 0.
async fn double_or_partial_expiries(app: &TestApp) -> i64 {
    app.count(
        "SELECT count(*) AS n FROM (
             SELECT client_id FROM point_entries WHERE kind = 'expiry'
             GROUP BY client_id, reference HAVING count(*) > 1
             UNION ALL
             SELECT a.client_id FROM point_accounts a
             WHERE a.balance <> 0 AND EXISTS (SELECT 1 FROM point_entries e
                                              WHERE e.client_id = a.client_id AND e.kind = 'expiry')
         ) bad",
    )
    .await
}

async fn audit_passes(app: &TestApp) {
    let mut conn = app.database.connect().await;
    if let Err(e) = audit::run(&mut conn).await {
        panic!("the audit failed: {e}");
    }
}

/// Waits (up to 30 s) until a session of the app's database waits for a row lock.
async fn someone_waits_for_a_lock(app: &TestApp) {
    let query = format!(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = '{}' AND wait_event_type = 'Lock'",
        app.database.name()
    );
    for _ in 0..600 {
        if app.count(&query).await > 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no session waited for the lock");
}

/// A connection holding client `client`'s account lock (the one a spend takes) until COMMIT.
async fn hold_account_lock(app: &TestApp, client: i64) -> AsyncPgConnection {
    let mut conn = app.database.connect().await;
    conn.batch_execute("BEGIN").await.unwrap();
    ledger::lock_accounts(&mut conn, &[client]).await.unwrap();
    conn.batch_execute("SELECT 1").await.unwrap();
    conn
}

fn cli(app: &TestApp, args: &[&str]) -> (Option<i32>, String) {
    let output = point_service_command(app.database.url(), args)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

#[tokio::test]
async fn a_client_past_the_date_is_expired_once_however_often_the_job_runs() {
    let app = spawn().await;
    // Earned later: its date (2026-06-01) has not come on 2 April.
    entry(&app, 2001, "earn", "40", "2025-06-01T10:00:00Z").await;
    let first = run(&app, options(THE_DAY_AFTER)).await;
    assert_eq!(
        (first.clients_expired, first.points_expired.to_string()),
        (1, "700.25".to_owned())
    );
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM point_entries WHERE client_id = {SARA} AND kind = 'expiry'
               AND points = -700.25 AND reference = 'expiry:{SARA}:{SARAS_DATE}:{}' AND order_correlation_id IS NULL",
            app.today().await
        ))
        .await,
        1
    );
    assert_eq!(app.balance_of(SARA).await, "0");
    // The second run, through the binary, finds nothing left to take.
    let (code, out) = cli(&app, &["expire-points", "--today", THE_DAY_AFTER]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        out.trim_end(),
        "expired: 0 clients, 0 points (Asia/Riyadh date 2026-04-02; 0 candidates unchanged)"
    );
    assert_eq!(expiry_entries(&app, SARA).await, 1);
    // Before the date: untouched.
    assert_eq!(expiry_entries(&app, 2001).await, 0);
    assert_eq!(
        app.count(
            "SELECT count(*) AS n FROM point_accounts WHERE client_id = 2001 AND balance = 40"
        )
        .await,
        1
    );
    audit_passes(&app).await;
}

#[tokio::test]
async fn the_date_itself_is_the_last_day_and_the_riyadh_day_turns_at_21_utc() {
    let app = spawn().await;
    let none = run(&app, options(SARAS_DATE)).await;
    assert_eq!(none.clients_expired, 0, "{none:?}");
    assert_eq!(app.balance_of(SARA).await, "700.25");
    // One second apart in UTC, on two Riyadh dates: 2025-06-01 and 2025-06-02.
    entry(&app, 2001, "earn", "10", "2025-06-01T20:59:59Z").await;
    entry(&app, 2002, "earn", "10", "2025-06-01T21:00:00Z").await;
    let run_on = |today: &'static str| {
        let app = &app;
        async move { run(app, options(today)).await }
    };
    let (_, body) = app.balance(2001).await;
    assert_eq!(body["pointsExpirationDate"], "2026-06-01");
    run_on("2026-06-02").await;
    assert_eq!(
        (
            expiry_entries(&app, 2001).await,
            expiry_entries(&app, 2002).await
        ),
        (1, 0)
    );
    run_on("2026-06-03").await;
    assert_eq!(expiry_entries(&app, 2002).await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_runs_at_once_expire_each_client_once() {
    let app = spawn().await;
    holders(&app, 3001..=3300, "2025-01-01T10:00:00Z").await;
    let small_batches = job::Options {
        batch_size: 7,
        ..options(THE_DAY_AFTER)
    };
    let (a, b) = tokio::join!(run(&app, small_batches), run(&app, small_batches));
    // Each client expired by exactly one of the two.
    assert_eq!(a.clients_expired + b.clients_expired, 301, "{a:?} {b:?}");
    assert_eq!(
        app.count("SELECT count(*) AS n FROM point_entries WHERE kind = 'expiry'")
            .await,
        301
    );
    assert_eq!(double_or_partial_expiries(&app).await, 0);
    // Sara's 700.25, and 100.1234 + id % 7 for each holder.
    let extra: i64 = (3001..=3300_i64).map(|id| id % 7).sum();
    let expected =
        decimal("700.25") + BigDecimal::from(300) * decimal("100.1234") + BigDecimal::from(extra);
    assert_eq!(a.points_expired + b.points_expired, expected);
    audit_passes(&app).await;
}

#[tokio::test]
async fn a_run_killed_half_way_is_finished_by_the_next_without_double_expiry() {
    let app = spawn().await;
    holders(&app, 3001..=3050, "2025-01-01T10:00:00Z").await;
    // Client 3020's account is held (as a long spend would hold it): the run expires the
    // clients before it, batch after batch, then waits there, and is killed while it waits.
    let mut lock = hold_account_lock(&app, 3020).await;
    let mut job = point_service_command(
        app.database.url(),
        &[
            "expire-points",
            "--today",
            THE_DAY_AFTER,
            "--batch-size",
            "10",
        ],
    )
    .stdout(Stdio::null())
    .spawn()
    .unwrap();
    someone_waits_for_a_lock(&app).await;
    job.kill().unwrap();
    assert!(!job.wait().unwrap().success());
    // Sara (1001) and 3001 to 3019 were expired, each in its own committed transaction.
    assert_eq!(
        app.count("SELECT count(*) AS n FROM point_entries WHERE kind = 'expiry'")
            .await,
        20
    );
    lock.batch_execute("COMMIT").await.unwrap();
    let (code, out) = cli(&app, &["expire-points", "--today", THE_DAY_AFTER]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.starts_with("expired: 31 clients, "), "{out}");
    assert_eq!(
        app.count("SELECT count(*) AS n FROM point_entries WHERE kind = 'expiry'")
            .await,
        51
    );
    assert_eq!(double_or_partial_expiries(&app).await, 0);
    audit_passes(&app).await;
}

#[tokio::test]
async fn a_run_stopped_between_two_clients_is_resumed_by_running_again() {
    let app = spawn().await;
    holders(&app, 3001..=3030, "2025-01-01T10:00:00Z").await;
    let mut conn = app.database.connect().await;
    let mut seen = 0;
    let stopped = job::run(
        &mut conn,
        job::Options {
            batch_size: 4,
            ..options(THE_DAY_AFTER)
        },
        |_| {
            seen += 1;
            if seen == 13 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    )
    .await
    .unwrap();
    assert!(stopped.stopped);
    assert_eq!(stopped.clients_expired, 13);
    let rest = run(&app, options(THE_DAY_AFTER)).await;
    assert_eq!(rest.clients_expired, 18, "{rest:?}");
    assert_eq!(double_or_partial_expiries(&app).await, 0);
    audit_passes(&app).await;
}

/// Sara's earn of 10, written in a transaction left open: by the ledger (which locks her
/// account first), or by a writer that forgot the lock (the entry's foreign key takes a
/// share lock on the account row, which the job's lock waits for all the same).
async fn open_earn(app: &TestApp, through_the_ledger: bool) -> AsyncPgConnection {
    if through_the_ledger {
        let mut earning = app.database.connect().await;
        earning.batch_execute("BEGIN").await.unwrap();
        let mut account = ledger::lock_account(&mut earning, SARA).await.unwrap();
        ledger::append(
            &mut earning,
            &mut account,
            ledger::Entry {
                kind: ledger::Kind::Earn,
                points: decimal("10"),
                order: None,
                reference: None,
                at: None,
            },
        )
        .await
        .unwrap();
        earning
    } else {
        let mut earning = app.database.connect().await;
        earning
            .batch_execute(&format!(
                "BEGIN; INSERT INTO point_entries (client_id, kind, points) VALUES ({SARA}, 'earn', 10)"
            ))
            .await
            .unwrap();
        earning
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_earn_that_lands_while_the_job_waits_moves_the_date_and_nothing_expires() {
    for through_the_ledger in [true, false] {
        let app = spawn().await;
        let mut earning = open_earn(&app, through_the_ledger).await;
        // The job's search still sees the old earn (the new one is not committed): Sara is
        // a candidate, and the job waits for her account's lock.
        let job = tokio::spawn({
            let url = app.database.url().to_owned();
            async move {
                let mut conn =
                    <AsyncPgConnection as diesel_async::AsyncConnection>::establish(&url)
                        .await
                        .unwrap();
                let mut outcomes = Vec::new();
                let summary = job::run(&mut conn, options(THE_DAY_AFTER), |outcome| {
                    outcomes.push(outcome.clone());
                    ControlFlow::Continue(())
                })
                .await
                .unwrap();
                (summary, outcomes)
            }
        });
        someone_waits_for_a_lock(&app).await;
        if !through_the_ledger {
            earning
                .batch_execute(&format!(
                    "UPDATE point_accounts SET balance = balance + 10 WHERE client_id = {SARA}"
                ))
                .await
                .unwrap();
        }
        earning.batch_execute("COMMIT").await.unwrap();
        let (summary, outcomes) = job.await.unwrap();
        assert_eq!(summary.clients_expired, 0, "{through_the_ledger}");
        // The new earn is today's (by the database's clock): its date is a year from now.
        assert!(
            matches!(outcomes.as_slice(), [Outcome::NotYet(date)] if *date > day(THE_DAY_AFTER)),
            "{through_the_ledger}: {outcomes:?}"
        );
        assert_eq!(app.balance_of(SARA).await, "710.25");
        assert_eq!(expiry_entries(&app, SARA).await, 0);
        audit_passes(&app).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_spend_racing_the_job_never_drives_the_balance_negative() {
    let app = spawn().await;
    let spend = order_body(OMAR, "point");
    // Sara's points go first, so that each round's run expires no one but Noura.
    run(&app, today_by_the_database()).await;
    let first_earn: chrono::DateTime<chrono::Utc> = "2025-06-01T10:00:00Z".parse().unwrap();
    let mut shapes = std::collections::BTreeMap::<(u64, usize), u32>::new();
    for i in 0..25 {
        // Each round Noura earns 600 a day later than the last, so each round has a date of
        // its own (2026-06-01 + i), passed by now; offers cost 120.
        let earned = (first_earn + chrono::Duration::days(i)).to_rfc3339();
        entry(&app, NOURA, "earn", "600", &earned).await;
        let orders = join_all((0..6).map(|_| app.order(NOURA, &spend)));
        let (answers, summary) = tokio::join!(orders, run(&app, today_by_the_database()));
        let spent = answers.iter().filter(|(status, _)| *status == 200).count();
        assert!(
            answers.iter().all(|(status, body)| *status == 200
                || (*status == 422 && body["error"]["code"] == "INSUFFICIENT_POINTS")),
            "{answers:?}"
        );
        // Whatever the order of events, the 600 went exactly once: spent or expired, and
        // an expiry happened exactly when something was left to take.
        assert_eq!(
            BigDecimal::from(120 * spent as i64) + &summary.points_expired,
            decimal("600"),
            "round {i}: {summary:?}"
        );
        assert_eq!(summary.clients_expired, u64::from(spent < 5), "round {i}");
        assert_eq!(app.balance_of(NOURA).await, "0");
        assert_eq!(
            app.count("SELECT count(*) AS n FROM point_accounts WHERE balance < 0")
                .await,
            0
        );
        *shapes.entry((summary.clients_expired, spent)).or_default() += 1;
    }
    let rounds_with_expiry: u32 = shapes
        .iter()
        .filter(|((e, _), _)| *e == 1)
        .map(|(_, n)| n)
        .sum();
    assert_eq!(
        expiry_entries(&app, NOURA).await,
        i64::from(rounds_with_expiry)
    );
    assert_eq!(double_or_partial_expiries(&app).await, 0);
    audit_passes(&app).await;
    eprintln!("(expiries, spends) per round: {shapes:?}");
}

#[tokio::test]
async fn after_expiry_the_balance_is_zero_with_its_date_and_the_history_lists_the_expiry() {
    let app = spawn().await;
    run(&app, options(THE_DAY_AFTER)).await;
    let (status, balance) = app.balance(SARA).await;
    assert_eq!(status, 200);
    // The spec's rule: the newest earn's date plus the days; the expiry is no earn.
    assert_eq!(
        balance,
        json!({"id": "1001", "user_id": "1001", "points": "0", "pointsExpirationDate": SARAS_DATE})
    );
    let (status, history) = app.history("", SARA).await;
    assert_eq!(status, 200);
    assert_eq!(history["meta"]["totalItems"], 4);
    let newest = &history["data"][0];
    assert_eq!(
        (
            &newest["kind"],
            &newest["points"],
            &newest["correlation_id"]
        ),
        (&json!("expiry"), &json!("-700.25"), &json!(null)),
        "{history}"
    );
    assert_eq!(
        keys(newest),
        ["id", "kind", "points", "correlation_id", "created_at"]
    );
}

/// A dry run may look ahead: the fixture as it is (Sara's date 2027-04-01, after the
/// database's today), as of a date the real run refuses.
#[tokio::test]
async fn a_dry_run_lists_what_would_expire_and_changes_nothing() {
    let app = spawn_app().await;
    holders(&app, 3001..=3002, "2026-01-01T10:00:00Z").await;
    let (code, out) = cli(
        &app,
        &[
            "expire-points",
            "--dry-run",
            "--today",
            "2027-04-02",
            "--batch-size",
            "1",
        ],
    );
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        out,
        "client_id\texpiry_date\tpoints\n\
         1001\t2027-04-01\t700.25\n\
         3001\t2027-01-01\t105.1234\n\
         3002\t2027-01-01\t106.1234\n\
         would expire: 3 clients, 911.4968 points (Asia/Riyadh date 2027-04-02; 0 candidates unchanged)\n"
    );
    assert_eq!(
        app.count("SELECT count(*) AS n FROM point_entries WHERE kind = 'expiry'")
            .await,
        0
    );
    assert_eq!(app.balance_of(SARA).await, "700.25");
}

#[tokio::test]
async fn nothing_expires_when_the_settings_say_never_or_are_unset() {
    let app = spawn().await;
    app.sql("UPDATE point_settings SET expiry = 'never', inactivity_days = NULL")
        .await;
    let never = run(&app, today_by_the_database()).await;
    assert!(!never.expiry_on);
    assert_eq!(never.clients_expired, 0);
    app.sql("DELETE FROM point_settings").await;
    let (code, out) = cli(&app, &["expire-points"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        out.trim_end(),
        format!(
            "expiry is off (point settings say never, or are unset): nothing expired (Asia/Riyadh date {})",
            app.today().await
        )
    );
    assert_eq!(app.balance_of(SARA).await, "700.25");
    assert_eq!(expiry_entries(&app, SARA).await, 0);
}

#[tokio::test]
async fn a_zero_or_negative_balance_is_never_expired() {
    let app = spawn().await;
    entry(&app, 2001, "earn", "100", "2025-01-01T10:00:00Z").await;
    entry(&app, 2001, "adjustment", "-150.5", "2025-02-01T10:00:00Z").await;
    entry(&app, 2002, "earn", "100", "2025-01-01T10:00:00Z").await;
    entry(&app, 2002, "spend", "-100", "2025-02-01T10:00:00Z").await;
    let summary = run(&app, today_by_the_database()).await;
    assert_eq!(summary.clients_expired, 1, "only Sara: {summary:?}");
    // Asked directly (the search leaves them out), under the lock they are still left alone.
    let mut conn = app.database.connect().await;
    for client in [2001, 2002] {
        assert_eq!(
            job::expire(&mut conn, client, day(THE_DAY_AFTER))
                .await
                .unwrap(),
            Outcome::NothingToExpire
        );
        assert_eq!(expiry_entries(&app, client).await, 0);
    }
    assert_eq!(
        app.count(
            "SELECT count(*) AS n FROM point_accounts WHERE client_id = 2001 AND balance = -50.5"
        )
        .await,
        1
    );
    audit_passes(&app).await;
}

/// A gift after the expiry does not move the date (only an earn does), so the date stays
/// passed: the same day's runs leave it (one entry per client, date and day, however many
/// runs or replicas), the next day's run takes it as an entry of its own.
#[tokio::test]
async fn points_that_arrive_after_an_expiry_go_with_the_next_days_run() {
    let app = spawn().await;
    let today = app.today().await;
    run(&app, today_by_the_database()).await;
    entry(&app, SARA, "gift_received", "30", "2026-04-03T10:00:00Z").await;
    let mut conn = app.database.connect().await;
    assert_eq!(
        job::expire(&mut conn, SARA, day(&today)).await.unwrap(),
        Outcome::AlreadyExpired(day(SARAS_DATE))
    );
    let again = run(&app, today_by_the_database()).await;
    assert_eq!((again.clients_expired, again.clients_unchanged), (0, 1));
    assert_eq!(app.balance_of(SARA).await, "30");
    // Today's run becomes yesterday's, as a run then would have written it.
    app.rewrite_entries(&format!(
        "UPDATE point_entries
           SET created_at = created_at - interval '1 day',
               reference = 'expiry:{SARA}:{SARAS_DATE}:'
                   || to_char((created_at - interval '1 day') AT TIME ZONE 'Asia/Riyadh', 'YYYY-MM-DD')
           WHERE kind = 'expiry'"
    ))
    .await;
    let next_day = run(&app, today_by_the_database()).await;
    assert_eq!(next_day.points_expired, decimal("30"));
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM point_entries WHERE reference = \
             'expiry:{SARA}:{SARAS_DATE}:{today}' AND points = -30"
        ))
        .await,
        1
    );
    assert_eq!(expiry_entries(&app, SARA).await, 2);
    assert_eq!(app.balance_of(SARA).await, "0");
    // A new earn moves the date a year on: nothing more goes.
    entry(&app, SARA, "earn", "5", "2026-05-01T10:00:00Z").await;
    let (_, balance) = app.balance(SARA).await;
    assert_eq!(balance["pointsExpirationDate"], "2027-05-01");
    assert_eq!(run(&app, today_by_the_database()).await.clients_expired, 0);
    assert_eq!(app.balance_of(SARA).await, "5");
    audit_passes(&app).await;
}

#[tokio::test]
async fn the_database_refuses_an_expiry_that_is_positive_or_not_named_by_its_client_and_dates() {
    let app = spawn().await;
    let mut conn = app.database.connect().await;
    for (points, reference) in [
        ("10", "'expiry:1001:2027-04-01:2027-04-02'"),
        ("-10", "'expiry:1002:2027-04-01:2027-04-02'"),
        ("-10", "'expiry:1001:2027-4-1:2027-04-02'"),
        ("-10", "'expiry:1001:2027-04-01'"),
        ("-10", "'expiry:1001:2027-04-01:2027-04-02:x'"),
        ("-10", "NULL"),
    ] {
        let forged = format!(
            "INSERT INTO point_entries (client_id, kind, points, reference) VALUES (1001, \
             'expiry', {points}, {reference})"
        );
        let refused = conn.batch_execute(&forged).await.unwrap_err().to_string();
        assert!(
            refused.contains("violates check constraint"),
            "{forged}: {refused}"
        );
    }
    app.sql(&format!(
        "INSERT INTO point_entries (client_id, kind, points, reference) VALUES (1001, 'expiry', \
         -10, 'expiry:1001:{SARAS_DATE}:2026-04-02')"
    ))
    .await;
    let twice = conn
        .batch_execute(&format!(
            "INSERT INTO point_entries (client_id, kind, points, reference) VALUES (1001, \
             'expiry', -5, 'expiry:1001:{SARAS_DATE}:2026-04-02')"
        ))
        .await
        .unwrap_err()
        .to_string();
    assert!(twice.contains("duplicate key"), "{twice}");
}

#[tokio::test]
async fn without_a_date_the_job_runs_as_of_today_by_the_databases_clock() {
    let app = spawn_app().await;
    // 366 days ago: the date (365 days on) was yesterday. 365 days ago: it is today.
    app.sql(
        "INSERT INTO point_accounts (client_id, balance) VALUES (2001, 5), (2002, 5);
         INSERT INTO point_entries (client_id, kind, points, created_at) VALUES
             (2001, 'earn', 5, now() - interval '366 days'),
             (2002, 'earn', 5, now() - interval '365 days');",
    )
    .await;
    let (code, out) = cli(&app, &["expire-points"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.starts_with("expired: 1 clients, 5 points"), "{out}");
    assert_eq!(
        (
            expiry_entries(&app, 2001).await,
            expiry_entries(&app, 2002).await
        ),
        (1, 0)
    );
}
