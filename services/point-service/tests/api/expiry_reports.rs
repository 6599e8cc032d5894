//! `point-service expiring` and `point-service liability`, checked against figures computed
//! by hand from generated ledgers (amounts with up to 4 decimals, times crowded around the
//! 21:00 UTC turn of the Riyadh day), and `expire-points` on the same ledgers.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use bigdecimal::{BigDecimal, Zero};
use chrono::{DateTime, Days, NaiveDate, Utc};
use chrono_tz::Asia::Riyadh;
use db::testing::TestDatabase;
use domain::Points;
use point_service::expiry::rule::ClientExpiry;
use point_service::expiry::{self, job};
use point_service::reports::audit;
use point_service::reports::liability::{self, Period};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::helpers::*;

#[derive(Debug, Clone)]
struct Row {
    client: i64,
    kind: &'static str,
    points: BigDecimal,
    at: DateTime<Utc>,
    /// The `payment_type` of the order the entry belongs to (the order kinds only).
    paid_by: Option<&'static str>,
}

#[derive(Debug, Clone)]
struct Ledger {
    rows: Vec<Row>,
    inactivity_days: u64,
    today: NaiveDate,
    window_days: u64,
    period: Period,
}

const KINDS: [&str; 7] = [
    "earn",
    "purchase",
    "gift_received",
    "gift_card_credit",
    "spend",
    "gift_sent",
    "adjustment",
];

fn base() -> DateTime<Utc> {
    "2026-03-01T00:00:00Z".parse().unwrap()
}

fn base_date() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 3, 1).unwrap()
}

fn riyadh_date(at: DateTime<Utc>) -> NaiveDate {
    at.with_timezone(&Riyadh).date_naive()
}

fn text(points: &BigDecimal) -> String {
    Points::new(points.clone()).to_text()
}

/// 0.0001 to 99999.9999.
fn amount() -> impl Strategy<Value = BigDecimal> {
    (1i64..1_000_000_000).prop_map(|n| BigDecimal::new(n.into(), 4))
}

fn instant() -> impl Strategy<Value = DateTime<Utc>> {
    // Half the entries within 3 s of 21:00 UTC, where the Riyadh date turns.
    let second = prop_oneof![0i64..86_400, 75_597i64..75_603];
    (0i64..30, second).prop_map(|(day, second)| {
        base() + chrono::Duration::days(day) + chrono::Duration::seconds(second)
    })
}

fn row(client: i64) -> impl Strategy<Value = Row> {
    (
        0..KINDS.len(),
        amount(),
        any::<bool>(),
        instant(),
        any::<bool>(),
    )
        .prop_map(move |(kind, points, negative, at, by_card)| {
            let kind = KINDS[kind];
            let negative =
                matches!(kind, "spend" | "gift_sent") || (kind == "adjustment" && negative);
            let paid_by = match kind {
                "purchase" | "gift_received" if by_card => Some("checkout"),
                "purchase" | "gift_received" | "gift_sent" => Some("point"),
                _ => None,
            };
            Row {
                client,
                kind,
                points: if negative { -points } else { points },
                at,
                paid_by,
            }
        })
}

fn date_in_range() -> impl Strategy<Value = NaiveDate> {
    (0u64..45).prop_map(|d| base_date() + Days::new(d))
}

fn ledger() -> impl Strategy<Value = Ledger> {
    let clients = prop::collection::vec(1usize..7, 1..25).prop_flat_map(|sizes| {
        sizes
            .into_iter()
            .enumerate()
            .map(|(n, size)| prop::collection::vec(row(5001 + n as i64), size))
            .collect::<Vec<_>>()
    });
    (
        clients,
        0u64..30,
        date_in_range(),
        0u64..12,
        proptest::option::of(date_in_range()),
        proptest::option::of(date_in_range()),
    )
        .prop_map(|(clients, inactivity_days, today, window_days, a, b)| {
            let (from, to) = match (a, b) {
                (Some(a), Some(b)) if a > b => (Some(b), Some(a)),
                other => other,
            };
            Ledger {
                rows: clients.into_iter().flatten().collect(),
                inactivity_days,
                today,
                window_days,
                period: Period { from, to },
            }
        })
}

/// Each client's balance and (with an earn) expiry date, by hand.
fn by_client(ledger: &Ledger) -> BTreeMap<i64, (BigDecimal, Option<NaiveDate>)> {
    let mut clients: BTreeMap<i64, (BigDecimal, Option<DateTime<Utc>>)> = BTreeMap::new();
    for row in &ledger.rows {
        let (balance, newest) = clients.entry(row.client).or_default();
        *balance += &row.points;
        if row.kind == "earn" {
            *newest = (*newest).max(Some(row.at));
        }
    }
    clients
        .into_iter()
        .map(|(client, (balance, newest))| {
            let date = newest.map(|at| riyadh_date(at) + Days::new(ledger.inactivity_days));
            (client, (balance, date))
        })
        .collect()
}

fn expected_expiring(ledger: &Ledger) -> Vec<ClientExpiry> {
    let last = ledger.today + Days::new(ledger.window_days);
    by_client(ledger)
        .into_iter()
        .filter_map(|(client_id, (points, date))| {
            let date = date?;
            (points > BigDecimal::zero() && ledger.today <= date && date <= last).then_some(
                ClientExpiry {
                    client_id,
                    date,
                    points,
                },
            )
        })
        .collect()
}

/// The report's lines, by hand: each entry falls before, in or after the period by its
/// Riyadh date.
fn expected_liability(rows: &[Row], period: Period) -> Vec<String> {
    let before = |row: &Row| period.from.is_some_and(|from| riyadh_date(row.at) < from);
    let after = |row: &Row| period.to.is_some_and(|to| riyadh_date(row.at) > to);
    let sum_of = |kinds: &[&str], paid_by: Option<&str>| -> BigDecimal {
        rows.iter()
            .filter(|r| kinds.contains(&r.kind) && !before(r) && !after(r))
            .filter(|r| paid_by.is_none() || r.paid_by == paid_by)
            .map(|r| r.points.clone())
            .sum()
    };
    let sum = |kind: &str| sum_of(&[kind], None);
    let card_orders = sum_of(&["purchase", "gift_received"], Some("checkout"));
    let credited = sum_of(&["purchase", "gift_received"], Some("point"));
    let opening: BigDecimal = rows
        .iter()
        .filter(|r| before(r))
        .map(|r| r.points.clone())
        .sum();
    let mut balances: BTreeMap<i64, BigDecimal> = BTreeMap::new();
    for row in rows.iter().filter(|r| !after(r)) {
        *balances.entry(row.client).or_default() += &row.points;
    }
    let zero = BigDecimal::zero();
    let positive: Vec<&BigDecimal> = balances.values().filter(|b| **b > zero).collect();
    let negative: Vec<&BigDecimal> = balances.values().filter(|b| **b < zero).collect();
    let issued = sum("earn") + sum("gift_card_credit") + &card_orders;
    let date = |d: Option<NaiveDate>| d.map_or("-".to_owned(), |d| d.to_string());
    vec![
        format!("period\tfrom\t{}", date(period.from)),
        format!("period\tto\t{}", date(period.to)),
        format!("opening\tbalance\t{}", text(&opening)),
        format!("issued\tearn\t{}", text(&sum("earn"))),
        format!(
            "issued\tgift_card_credit\t{}",
            text(&sum("gift_card_credit"))
        ),
        format!("issued\tcard_orders\t{}", text(&card_orders)),
        format!("issued\ttotal\t{}", text(&issued)),
        format!("transfers\tcredited\t{}", text(&credited)),
        format!("transfers\tdebited\t{}", text(&-sum("gift_sent"))),
        format!("spent\tspend\t{}", text(&-sum("spend"))),
        format!("expired\texpiry\t{}", text(&-sum("expiry"))),
        format!(
            "adjusted\tadjustment\t{}",
            text(&(sum("adjustment") + sum("support_adjustment")))
        ),
        format!(
            "adjusted\tsupport_adjustment\t{}",
            text(&sum("support_adjustment"))
        ),
        format!("closing\tbalance\t{}", text(&balances.values().sum())),
        format!(
            "outstanding\tpoints\t{}",
            text(&positive.iter().copied().sum())
        ),
        format!("outstanding\tclients\t{}", positive.len()),
        format!(
            "negative\tpoints\t{}",
            text(&negative.iter().copied().sum())
        ),
        format!("negative\tclients\t{}", negative.len()),
    ]
}

/// A database holding exactly `ledger`: settings, accounts with their balances, entries, and
/// an order (copied from the legacy system: no order number) for each entry of an order.
async fn load(ledger: &Ledger) -> TestDatabase {
    let database = TestDatabase::new(point_service::db::MIGRATIONS).await;
    let mut sql = format!(
        "INSERT INTO point_settings (expiry, inactivity_days) VALUES ('inactivity', {});",
        ledger.inactivity_days
    );
    for (client, (balance, _)) in by_client(ledger) {
        sql += &format!(
            "INSERT INTO point_accounts (client_id, balance) VALUES ({client}, {balance});"
        );
    }
    for row in &ledger.rows {
        let entry = format!(
            "INSERT INTO point_entries (client_id, kind, points, created_at, order_correlation_id)
               SELECT {}, '{}', {}, '{}', ",
            row.client,
            row.kind,
            row.points,
            row.at.to_rfc3339()
        );
        sql += &match row.paid_by {
            None => format!("{entry} NULL;"),
            Some(paid_by) => format!(
                "WITH o AS (INSERT INTO point_orders (correlation_id, order_no, payer_id, recipient_id, status,
                                                     point_amount, money_amount, payment_type, order_type)
                            VALUES (gen_random_uuid(), NULL, {0}, {0}, 'successful', 1, 0, '{paid_by}', 'transfer')
                            RETURNING correlation_id)
                 {entry} o.correlation_id FROM o;",
                row.client
            ),
        };
    }
    database.execute(&sql).await;
    database
}

async fn check(ledger: Ledger) {
    let database = load(&ledger).await;
    let mut conn = database.connect().await;

    let mut listed = Vec::new();
    expiry::report::each(&mut conn, ledger.today, ledger.window_days, |e| {
        listed.push(e)
    })
    .await
    .unwrap();
    assert_eq!(listed, expected_expiring(&ledger));

    let report = liability::report(&mut conn, ledger.period).await.unwrap();
    assert_eq!(
        report.lines(),
        expected_liability(&ledger.rows, ledger.period)
    );

    // The job takes exactly the positive balances whose date is before today, once.
    let due: BTreeMap<i64, BigDecimal> = by_client(&ledger)
        .into_iter()
        .filter(|(_, (balance, date))| {
            *balance > BigDecimal::zero() && date.is_some_and(|d| d < ledger.today)
        })
        .map(|(client, (balance, _))| (client, balance))
        .collect();
    let options = job::Options {
        today: Some(ledger.today),
        batch_size: 3,
        dry_run: false,
    };
    let summary = job::run(&mut conn, options, |_| ControlFlow::Continue(()))
        .await
        .unwrap();
    assert_eq!(summary.clients_expired, due.len() as u64);
    assert_eq!(summary.points_expired, due.values().sum::<BigDecimal>());
    let again = job::run(&mut conn, options, |_| ControlFlow::Continue(()))
        .await
        .unwrap();
    assert_eq!(again.clients_expired, 0);

    // The liability of the whole ledger now counts them as expired; the audit passes.
    let now = Utc::now();
    let mut after = ledger.rows.clone();
    after.extend(due.iter().map(|(client, points)| Row {
        client: *client,
        kind: "expiry",
        points: -points.clone(),
        at: now,
        paid_by: None,
    }));
    let whole = liability::report(&mut conn, Period::default())
        .await
        .unwrap();
    assert_eq!(whole.lines(), expected_liability(&after, Period::default()));
    audit::run(&mut conn).await.unwrap();
}

#[test]
fn expiring_liability_and_expiry_match_figures_computed_by_hand() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut runner = TestRunner::new(Config {
        cases: 16,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&ledger(), |ledger| {
            runtime.block_on(check(ledger));
            Ok(())
        })
        .unwrap();
}

#[tokio::test]
async fn the_reports_on_the_command_line() {
    let app = spawn_app().await;
    // Sara: 500.5 earned 2026-01-01, 250 earned at 22:30 UTC on 31 March (1 April in
    // Riyadh), 50.25 spent 2026-04-02; her date is 2027-04-01.
    let run = |args: &[&str]| {
        let output = point_service_command(app.database.url(), args)
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    };
    let (code, out, _) = run(&["expiring", "--days", "30", "--today", "2027-03-02"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        "client_id\texpiry_date\tpoints\n1001\t2027-04-01\t700.25\n"
    );
    let (_, out, _) = run(&["expiring", "--days", "29", "--today", "2027-03-02"]);
    assert_eq!(out, "client_id\texpiry_date\tpoints\n");
    let (_, out, _) = run(&["expiring", "--days", "0", "--today", "2027-04-02"]);
    assert_eq!(
        out, "client_id\texpiry_date\tpoints\n",
        "passed, not expiring"
    );

    let (code, out, _) = run(&["liability", "--from", "2026-03-31", "--to", "2026-03-31"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        "period\tfrom\t2026-03-31\nperiod\tto\t2026-03-31\nopening\tbalance\t500.5\n\
         issued\tearn\t0\nissued\tgift_card_credit\t0\nissued\tcard_orders\t0\nissued\ttotal\t0\n\
         transfers\tcredited\t0\ntransfers\tdebited\t0\n\
         spent\tspend\t0\nexpired\texpiry\t0\nadjusted\tadjustment\t0\n\
         adjusted\tsupport_adjustment\t0\n\
         closing\tbalance\t500.5\noutstanding\tpoints\t500.5\noutstanding\tclients\t1\n\
         negative\tpoints\t0\nnegative\tclients\t0\n"
    );
    let (_, out, _) = run(&["liability", "--from", "2026-04-01"]);
    assert!(
        out.contains("opening\tbalance\t500.5\nissued\tearn\t250\n")
            && out.contains("spent\tspend\t50.25\n")
            && out.contains("closing\tbalance\t700.25\n"),
        "{out}"
    );
    let (code, _, err) = run(&["liability", "--from", "2026-04-02", "--to", "2026-04-01"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("--from 2026-04-02 is after --to 2026-04-01"),
        "{err}"
    );
    let (code, _, _) = run(&["expiring", "--days", "-1"]);
    assert_eq!(code, Some(2));
}

#[tokio::test]
async fn a_kind_the_report_does_not_know_fails_it_instead_of_leaving_points_out() {
    let app = spawn_app().await;
    // What a later migration adding a kind, without teaching the report, would leave.
    app.sql(
        "ALTER TABLE point_entries DROP CONSTRAINT point_entries_kind_check;
         INSERT INTO point_entries (client_id, kind, points) VALUES (1001, 'bonus', 5);",
    )
    .await;
    let mut conn = app.database.connect().await;
    let refused = liability::report(&mut conn, Period::default())
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "the ledger holds entries of kind \"bonus\", which this report does not know"
    );
}
