//! Attacks on points expiry (a fresh-context hostile review found each defect): each test
//! states what must hold, and failed while the defect it names was there.
//!
//! The fixture's Sara (1001) holds 700.25 points; her newest earn is 1 April 2026 in Riyadh,
//! so with 365 inactivity days her date is 2027-04-01, after today's date of the machine
//! clock (November 2026): her points are not due yet. A real run expires only dates the
//! database's clock has passed, so the tests that run the job move the ledger a year back
//! first (`a_year_earlier`: her date becomes 2026-04-01).

use std::ops::ControlFlow;

use chrono::NaiveDate;
use point_service::expiry::job;
use point_service::reports::audit::{self, AuditError};
use point_service::reports::liability::{self, Period};
use point_service::riyadh;
use serde_json::json;

use crate::helpers::*;

const SARAS_DATE: &str = "2027-04-01";

fn day(text: &str) -> NaiveDate {
    text.parse().unwrap()
}

/// A real run as of the database's today.
async fn run_today(app: &TestApp) -> job::Summary {
    let mut conn = app.database.connect().await;
    let options = job::Options {
        today: None,
        batch_size: job::DEFAULT_BATCH_SIZE,
        dry_run: false,
    };
    job::run(&mut conn, options, |_| ControlFlow::Continue(()))
        .await
        .unwrap()
}

async fn expiry_entries(app: &TestApp, client: i64) -> i64 {
    app.count(&format!(
        "SELECT count(*) AS n FROM point_entries WHERE client_id = {client} AND kind = 'expiry'"
    ))
    .await
}

/// The audit's first violation, if any; it must be of the expiry check.
async fn audit_violation(app: &TestApp) -> Option<String> {
    let mut conn = app.database.connect().await;
    match audit::run(&mut conn).await {
        Ok(_) => None,
        Err(AuditError::Violation { check, detail }) => {
            assert!(check.starts_with("every expiry entry"), "{check}: {detail}");
            Some(detail)
        }
        Err(e) => panic!("the audit could not run: {e}"),
    }
}

/// Writes an expiry entry behind the job's back (as a bug or a hand would), moving the cached
/// balance with it so that only the expiry check can see it.
async fn forge_expiry(app: &TestApp, client: i64, points: &str, reference: &str, at: &str) {
    app.sql(&format!(
        "INSERT INTO point_entries (client_id, kind, points, reference, created_at)
           VALUES ({client}, 'expiry', -{points}, '{reference}', '{at}');
         UPDATE point_accounts SET balance = balance - {points} WHERE client_id = {client};"
    ))
    .await;
}

/// Forges an expiry ([`forge_expiry`]) and asserts that the audit refuses it for `why`.
async fn assert_audit_refuses_forged(
    app: &TestApp,
    client: i64,
    points: &str,
    reference: &str,
    at: &str,
    why: &str,
) {
    forge_expiry(app, client, points, reference, at).await;
    let violation = audit_violation(app).await;
    assert!(
        violation.as_deref().is_some_and(|v| v.contains(why)),
        "the audit did not refuse {reference} ({points} points written at {at}) for {why:?}: {violation:?}"
    );
}

/// `--today` is the operator's to set, and nothing stops a date after the database's own:
/// a typo (2099 for 2026) or a test date run against production takes every client's
/// points now, months or years before the date their balance answer promises. The job
/// should refuse a today after the database's (a dry run may look ahead).
#[tokio::test]
async fn a_today_after_the_databases_date_does_not_take_points_before_their_date() {
    let app = spawn_app().await;
    let output = point_service_command(
        app.database.url(),
        &["expire-points", "--today", "2099-01-01"],
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        (expiry_entries(&app, SARA).await, app.balance_of(SARA).await),
        (0, "700.25".to_owned()),
        "Sara's date {SARAS_DATE} has not come, yet `--today 2099-01-01` expired her points \
         (exit {:?}: {stdout})",
        output.status.code()
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!(
            "--today 2099-01-01 is after the database's Asia/Riyadh date {}",
            app.today().await
        )),
        "{stderr}"
    );
    // Looking ahead is harmless: a dry run lists what would go then, and writes nothing.
    let dry = point_service_command(
        app.database.url(),
        &["expire-points", "--dry-run", "--today", "2099-01-01"],
    )
    .output()
    .unwrap();
    assert_eq!(dry.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&dry.stdout).contains(&format!("1001\t{SARAS_DATE}\t700.25\n")),
        "{dry:?}"
    );
    assert_eq!(expiry_entries(&app, SARA).await, 0);
    // The job's one-client step refuses it too, whoever calls it.
    let mut conn = app.database.connect().await;
    assert!(matches!(
        job::expire(&mut conn, SARA, day("2099-01-01")).await,
        Err(job::ExpireError::TodayAhead { .. })
    ));
}

/// Omar never earned: his balance answers no expiry date, so nothing may ever expire his
/// points. A forged expiry of all of them, named by some date, passes the database (negative,
/// named by client and date) and the audit (it leaves the balance at 0).
#[tokio::test]
async fn the_audit_catches_an_expiry_of_a_client_who_has_no_expiry_date() {
    let app = spawn_app().await;
    let (status, _) = app
        .credit(&json!({"client_id": OMAR, "points": "100", "reference": "gift-card:1", "reason": "gift_card"}))
        .await;
    assert_eq!(status, 200);
    let (_, balance) = app.balance(OMAR).await;
    assert_eq!(balance["pointsExpirationDate"], serde_json::Value::Null);
    assert_audit_refuses_forged(
        &app,
        OMAR,
        "100",
        "expiry:1002:2026-01-01:2026-11-01",
        "2026-11-01T10:00:00Z",
        "the client had no earn before it",
    )
    .await;
}

/// Sara's date is 2027-04-01: an expiry under that name written in November 2026, months
/// before the date passed, took points the rule had not released. The audit can see it: the
/// entry's Riyadh date (its run date) is not after the date it names.
#[tokio::test]
async fn the_audit_catches_an_expiry_written_before_its_date_had_passed() {
    let app = spawn_app().await;
    assert_audit_refuses_forged(
        &app,
        SARA,
        "700.25",
        "expiry:1001:2027-04-01:2026-11-01",
        "2026-11-01T10:00:00Z",
        "its expiry date 2027-04-01 had not passed on its run date 2026-11-01",
    )
    .await;
}

/// An expiry takes the whole positive balance (decisions.md): one that leaves points behind
/// after a real, passed date is not the job's. Its running balance after it is not zero.
#[tokio::test]
async fn the_audit_catches_an_expiry_that_takes_only_part_of_the_balance() {
    let app = spawn_app().await;
    assert_audit_refuses_forged(
        &app,
        SARA,
        "100",
        "expiry:1001:2027-04-01:2027-04-02",
        "2027-04-02T10:00:00Z",
        "it leaves the balance at 600.25, not 0",
    )
    .await;
}

/// The control for the forgeries above: an expiry that keeps every rule (its date passed on
/// the day it was written, after her newest earn, all her points) passes the audit, so each
/// of them fails for its own defect alone.
#[tokio::test]
async fn the_audit_passes_an_expiry_that_keeps_the_rule() {
    let app = spawn_app().await;
    forge_expiry(
        &app,
        SARA,
        "700.25",
        "expiry:1001:2027-04-01:2027-04-02",
        "2027-04-01T21:00:00Z",
    )
    .await;
    assert_eq!(audit_violation(&app).await, None);
}

/// The run date must be the Riyadh date the entry was written on: 20:59 UTC on 1 April is
/// still 1 April in Riyadh, so an entry that says it ran on 2 April lies about its day (and
/// would hide a run before the date had passed).
#[tokio::test]
async fn the_audit_catches_an_expiry_whose_run_date_is_not_the_day_it_was_written() {
    let app = spawn_app().await;
    assert_audit_refuses_forged(
        &app,
        SARA,
        "700.25",
        "expiry:1001:2027-04-01:2027-04-02",
        "2027-04-01T20:59:59Z",
        "its run date 2027-04-02 is not the Asia/Riyadh date it was written on, 2027-04-01",
    )
    .await;
}

/// An expiry date before the newest earn that came before the entry cannot be that earn's
/// date plus any number of days: the points it took were not due.
#[tokio::test]
async fn the_audit_catches_an_expiry_dated_before_the_newest_earn() {
    let app = spawn_app().await;
    assert_audit_refuses_forged(
        &app,
        SARA,
        "700.25",
        "expiry:1001:2026-03-31:2027-04-02",
        "2027-04-02T10:00:00Z",
        "its expiry date 2026-03-31 is before the date of the newest earn before it, 2026-04-01",
    )
    .await;
}

/// `expiry:1001:2027-13-45:…` names no date at all; the database's check takes
/// `[0-9]{4}-[0-9]{2}-[0-9]{2}` for a date, the audit must not.
#[tokio::test]
async fn the_audit_catches_an_expiry_named_by_a_date_that_does_not_exist() {
    let app = spawn_app().await;
    assert_audit_refuses_forged(
        &app,
        SARA,
        "700.25",
        "expiry:1001:2027-13-45:2027-04-02",
        "2027-04-02T10:00:00Z",
        "its expiry date 2027-13-45 does not exist",
    )
    .await;
    // A 29 February that was not, either.
    app.rewrite_entries("DELETE FROM point_entries WHERE kind = 'expiry'")
        .await;
    app.sql("UPDATE point_accounts SET balance = balance + 700.25 WHERE client_id = 1001")
        .await;
    assert_audit_refuses_forged(
        &app,
        SARA,
        "700.25",
        "expiry:1001:2027-02-29:2027-04-02",
        "2027-04-02T10:00:00Z",
        "its expiry date 2027-02-29 does not exist",
    )
    .await;
}

/// The rule: the job expires the positive balance of every client whose date has
/// passed, so that the date the app shows is true. After Sara's expiry a gift arrives; her
/// date stays 2026-04-01 (only an earn moves it), so the balance answers 30 points "expiring"
/// on a day long gone, and every later run leaves them: they never expire until she earns
/// again, and if she never does, the app's date is false for good.
#[tokio::test]
async fn points_received_after_an_expiry_do_not_outlive_a_passed_date() {
    let app = spawn_app().await;
    app.a_year_earlier().await;
    assert_eq!(run_today(&app).await.clients_expired, 1);
    // That run was yesterday's (its entry moved a day back, as a run then would have
    // written it), and the gift arrived since.
    app.rewrite_entries(
        "UPDATE point_entries
           SET created_at = created_at - interval '1 day',
               reference = 'expiry:1001:2026-04-01:'
                   || to_char((created_at - interval '1 day') AT TIME ZONE 'Asia/Riyadh', 'YYYY-MM-DD')
           WHERE kind = 'expiry'",
    )
    .await;
    app.sql(
        "INSERT INTO point_entries (client_id, kind, points) VALUES (1001, 'gift_received', 30);
         UPDATE point_accounts SET balance = balance + 30 WHERE client_id = 1001;",
    )
    .await;
    assert_eq!(
        run_today(&app).await.points_expired,
        "30".parse::<bigdecimal::BigDecimal>().unwrap()
    );
    let (_, balance) = app.balance(SARA).await;
    assert_eq!(balance["pointsExpirationDate"], "2026-04-01");
    assert_eq!(
        balance["points"], "0",
        "the day after its date passed, the balance still holds points: {balance}"
    );
    assert_eq!(expiry_entries(&app, SARA).await, 2);
    assert_eq!(audit_violation(&app).await, None);
}

/// A point order moves points between clients (Sara pays 120, Omar receives 100): no point
/// enters the programme, yet the liability report lists Omar's 100 as `issued` (beside
/// Sara's 120 as `gifted`), so finance reads 100 points issued in a period in which none
/// were: the transfer is counted on both sides of the flow.
#[tokio::test]
async fn a_point_order_between_clients_is_not_reported_as_points_issued() {
    let app = spawn_app().await;
    let (status, order) = app.order(SARA, &order_body(OMAR, "point")).await;
    assert_eq!(status, 200, "{order}");
    let mut conn = app.database.connect().await;
    let today = riyadh::today(&mut conn).await.unwrap();
    let report = liability::report(
        &mut conn,
        Period {
            from: Some(today),
            to: Some(today),
        },
    )
    .await
    .unwrap();
    let lines = report.lines();
    assert!(
        lines.iter().any(|line| line == "issued\ttotal\t0"),
        "only a transfer happened today, yet: {lines:#?}"
    );
    // It is reported as what it is: 100 credited to Omar, 120 debited from Sara, and the
    // 20 between them burnt (closing = opening + 100 - 120).
    for line in ["transfers\tcredited\t100", "transfers\tdebited\t120"] {
        assert!(lines.iter().any(|l| l == line), "{line}: {lines:#?}");
    }
    assert_eq!(
        report.closing,
        &report.opening - bigdecimal::BigDecimal::from(20)
    );
    // A card order's credit is issuance.
    let (_, card) = app.order(SARA, &order_body(NOURA, "checkout")).await;
    let event = json!({"id": "evt_card", "type": "payment_captured", "data": {
        "reference": card["correlation_id"], "payment_id": "pay_card", "provider": "sandbox",
        "amount_minor": 1500, "currency": "SAR"}});
    let (status, _) = app
        .webhook(&event, WEBHOOK_SECRET, chrono::Utc::now().timestamp())
        .await;
    assert_eq!(status, 200);
    let report = liability::report(
        &mut conn,
        Period {
            from: Some(today),
            to: Some(today),
        },
    )
    .await
    .unwrap();
    let lines = report.lines();
    for line in ["issued\tcard_orders\t100", "issued\ttotal\t100"] {
        assert!(lines.iter().any(|l| l == line), "{line}: {lines:#?}");
    }
}

/// A credit of no order cannot be placed (issued by card, or moved by a point order): the
/// report fails rather than guess.
#[tokio::test]
async fn a_credit_of_no_order_fails_the_liability_report() {
    let app = spawn_app().await;
    app.sql(
        "INSERT INTO point_entries (client_id, kind, points) VALUES (1001, 'gift_received', 5);
         UPDATE point_accounts SET balance = balance + 5 WHERE client_id = 1001;",
    )
    .await;
    let mut conn = app.database.connect().await;
    let refused = liability::report(&mut conn, Period::default())
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "the ledger holds gift_received entries of no order, which this report cannot place (issued or transferred)"
    );
}

/// Waits (up to 30 s) until `n` sessions of the app's database wait for a lock.
async fn sessions_wait_for_locks(app: &TestApp, n: i64) {
    let query = format!(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = '{}' AND wait_event_type = 'Lock'",
        app.database.name()
    );
    for _ in 0..600 {
        if app.count(&query).await >= n {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("fewer than {n} sessions waited for a lock");
}

/// The audit's expiry check reads "the running sum by id is the balance after each entry",
/// which holds only for writers that take the account lock before their id. The seed did
/// not (its entry's id was drawn, then its foreign key waited for the account): a legacy
/// spend imported while the job held Sara's lock got the smaller id and committed after the
/// expiry, and the audit blamed the expiry for leaving her at -50. Now the seed (the real
/// `point-service seed`) locks the account first, so its entry comes after the expiry's.
/// An exclusive lock on the settings holds the job between its account lock and its entry,
/// so the interleaving is forced, not raced.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_audit_does_not_blame_an_expiry_for_a_seed_spend_that_committed_after_it() {
    use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
    let app = spawn_app().await;
    app.a_year_earlier().await;
    let url = app.database.url().to_owned();
    let mut settings = app.database.connect().await;
    settings
        .batch_execute("BEGIN; LOCK TABLE point_settings IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    let today = day(&app.today().await);
    let job = tokio::spawn({
        let url = url.clone();
        async move {
            let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
            job::expire(&mut conn, SARA, today).await.unwrap()
        }
    });
    sessions_wait_for_locks(&app, 1).await;
    let file = std::env::temp_dir().join(format!("expiry-review-{}.json", app.database.name()));
    std::fs::write(
        &file,
        json!({"point_transactions": [
            {"client_id": SARA, "kind": "spend", "points": "50", "created_at": "2026-04-01T12:00:00Z"}
        ]})
        .to_string(),
    )
    .unwrap();
    let mut seed = point_service_command(&url, &["seed", file.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    sessions_wait_for_locks(&app, 2).await;
    settings.batch_execute("COMMIT").await.unwrap();
    let outcome = job.await.unwrap();
    assert!(seed.wait().unwrap().success());
    std::fs::remove_file(&file).unwrap();
    assert!(
        matches!(&outcome, job::Outcome::Expired(e) if e.points == "700.25".parse::<bigdecimal::BigDecimal>().unwrap()),
        "{outcome:?}"
    );
    assert_eq!(app.balance_of(SARA).await, "-50");
    assert_eq!(audit_violation(&app).await, None);
}
