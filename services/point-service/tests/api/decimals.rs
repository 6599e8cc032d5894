//! Point amounts are exact decimals from fixture to database to answer (`docs/design.md`,
//! "Answers the spec leaves open"), a `point` order charges exactly the offer's price, and a
//! bad fixture row is reported without costing the valid rows their place. The fixtures and
//! amounts are generated: fractions, integers past a double's 2^53, 20 and more decimals,
//! integers written as `100.0` or with an exponent, and the zero and negative amounts the
//! spec refuses.

use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

use bigdecimal::BigDecimal;
use diesel::sql_types::Text;
use diesel_async::RunQueryDsl;
use point_service::seed;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, TestCaseError, TestRunner};
use serde_json::{Value, json};
use server::SeedReport;

use crate::helpers::*;

/// Fresh ids and times, so that the cases of one run never meet in the shared database.
static NEXT: AtomicU64 = AtomicU64::new(1);

fn fresh() -> u64 {
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn fresh_offer_id() -> String {
    format!("{:024x}", 0xdec0_0000_0000_u64 + fresh())
}

fn exact(text: &str) -> BigDecimal {
    BigDecimal::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// A JSON number's text as written in a fixture, and whether the spec allows it as an
/// amount of points (positive).
#[derive(Debug, Clone)]
struct Amount {
    text: String,
    positive: bool,
}

/// Digits as a fixture may write them: plain fractions, long integers (past 2^53), many
/// decimals, an integer written as `100.0`, an exponent, and zero or negative values.
fn amount() -> impl Strategy<Value = Amount> {
    let int = prop_oneof!["[1-9][0-9]{0,3}", "[1-9][0-9]{16,29}", Just("0".to_owned())];
    let frac = prop_oneof![
        Just(String::new()),
        "[0-9]{1,4}",
        "[0-9]{20,30}",
        Just("0".to_owned()),
    ];
    let form = prop_oneof![Just("plain"), Just("exponent"), Just("negative")];
    (int, frac, form).prop_map(|(int, frac, form)| {
        let plain = if frac.is_empty() {
            int.clone()
        } else {
            format!("{int}.{frac}")
        };
        let text = match form {
            // 12.5 written as 1.25e1: the same decimal.
            "exponent" => format!("{plain}e-2"),
            "negative" => format!("-{plain}"),
            _ => plain,
        };
        let positive = exact(&text).sign() == bigdecimal::num_bigint::Sign::Plus;
        Amount { text, positive }
    })
}

/// A JSON number with exactly `text` as its digits (serde_json keeps them).
fn number(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// The answer's form of a point amount: plain digits, no exponent, no trailing zeros.
fn plain_shape(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let no_exponent = digits.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let trimmed = digits
        .split_once('.')
        .is_none_or(|(_, frac)| !frac.is_empty() && !frac.ends_with('0'));
    no_exponent && trimmed
}

async fn load(app: &TestApp, fixture: &Value) -> SeedReport {
    let mut conn = app.database.connect().await;
    testkit::seed::load(&mut conn, seed::load, fixture)
        .await
        .unwrap()
}

#[derive(diesel::QueryableByName)]
struct Text1 {
    #[diesel(sql_type = Text)]
    t: String,
}

async fn text(app: &TestApp, query: &str) -> String {
    let mut conn = app.database.connect().await;
    diesel::sql_query(query)
        .get_result::<Text1>(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .t
}

/// One generated offer row: its amounts, and one way of being bad (or none).
#[derive(Debug, Clone)]
struct OfferRow {
    point_amount: Amount,
    purchased: Option<Amount>,
    /// `amount` in fractions of a halala (9.125 SAR), refused at load.
    sub_halala: bool,
}

fn offer_row() -> impl Strategy<Value = OfferRow> {
    (
        amount(),
        prop::option::of(amount()),
        prop::bool::weighted(0.15),
    )
        .prop_map(|(point_amount, purchased, sub_halala)| OfferRow {
            point_amount,
            purchased,
            sub_halala,
        })
}

impl OfferRow {
    fn valid(&self) -> bool {
        self.point_amount.positive
            && self.purchased.as_ref().is_none_or(|p| p.positive)
            && !self.sub_halala
    }

    /// The field the report must name when the row is bad.
    fn bad_field(&self) -> &'static str {
        if self.sub_halala {
            "amount"
        } else if !self.point_amount.positive {
            "point_amount"
        } else {
            "purchased_point_amount"
        }
    }
}

async fn offers_round_trip(app: &TestApp, rows: Vec<OfferRow>) -> Result<(), TestCaseError> {
    let ids: Vec<String> = rows.iter().map(|_| fresh_offer_id()).collect();
    let items: Vec<Value> = rows
        .iter()
        .zip(&ids)
        .map(|(row, id)| {
            json!({
                "id": id,
                "point_amount": number(&row.point_amount.text),
                "purchased_point_amount": row.purchased.as_ref().map(|p| number(&p.text)),
                "amount": if row.sub_halala { "9.125" } else { "15.00" },
                "active": true,
            })
        })
        .collect();
    let fixture = json!({ "point_offers": items });
    let report = load(app, &fixture).await;
    let bad = rows.iter().filter(|r| !r.valid()).count();
    prop_assert_eq!(report.rejected.len(), bad, "{:?}", report.rejected);
    for (index, (row, id)) in rows.iter().zip(&ids).enumerate() {
        let (status, body) = app.offer(id, SARA).await;
        if !row.valid() {
            prop_assert_eq!(status, 404, "a bad row was loaded: {:?}", row);
            let prefix = format!("point_offers[{index}] (id {id}): {}: ", row.bad_field());
            prop_assert!(
                report
                    .rejected
                    .iter()
                    .any(|r| r.to_string().starts_with(&prefix)),
                "{prefix} not in {:?}",
                report.rejected
            );
            continue;
        }
        prop_assert_eq!(status, 200, "{:?} {}", row, body);
        // The stored decimal, the answer's digits: both exactly the fixture's number.
        let stored = text(
            app,
            &format!("SELECT point_amount::text AS t FROM point_offers WHERE id = '{id}'"),
        )
        .await;
        prop_assert_eq!(exact(&stored), exact(&row.point_amount.text));
        let answered = body["point_amount"].to_string();
        prop_assert!(plain_shape(&answered), "{}", answered);
        prop_assert_eq!(exact(&answered), exact(&row.point_amount.text));
        match &row.purchased {
            Some(price) => {
                let answered = body["purchased_point_amount"].to_string();
                prop_assert!(plain_shape(&answered), "{}", answered);
                prop_assert_eq!(exact(&answered), exact(&price.text));
            }
            None => prop_assert_eq!(&body["purchased_point_amount"], &Value::Null),
        }
    }
    Ok(())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn every_valid_offer_round_trips_exactly_and_every_bad_row_is_reported() {
    let runtime = runtime();
    let app = runtime.block_on(spawn_app());
    let mut runner = TestRunner::new(ProptestConfig {
        cases: 40,
        ..ProptestConfig::default()
    });
    runner
        .run(&vec(offer_row(), 1..6), |rows| {
            runtime.block_on(offers_round_trip(&app, rows))
        })
        .unwrap();
}

/// Seeds an offer of `point_amount` points for `price`, and earns the payer `price` so that
/// the order is affordable whatever its size.
async fn priced_offer(app: &TestApp, point_amount: &str, price: &str) -> String {
    let id = fresh_offer_id();
    let at = format!("2026-05-01T10:00:{:02}Z", fresh() % 60);
    let fixture = json!({
        "point_transactions": [{"client_id": SARA, "kind": "earn", "points": number(price),
                                "created_at": at}],
        "point_offers": [{"id": id, "point_amount": number(point_amount),
                          "purchased_point_amount": number(price), "amount": "15.00"}],
    });
    let report = load(app, &fixture).await;
    assert!(report.rejected.is_empty(), "{:?}", report.rejected);
    id
}

async fn balance_exact(app: &TestApp, client: i64) -> BigDecimal {
    exact(
        &text(
            app,
            &format!(
                "SELECT COALESCE(sum(points), 0)::text AS t FROM point_entries WHERE client_id = {client}"
            ),
        )
        .await,
    )
}

async fn point_order_charges_exactly(
    app: &TestApp,
    point_amount: String,
    price: String,
) -> Result<(), TestCaseError> {
    let id = priced_offer(app, &point_amount, &price).await;
    let (payer, recipient) = (
        balance_exact(app, SARA).await,
        balance_exact(app, OMAR).await,
    );
    let (status, order) = app
        .order(
            SARA,
            &json!({"point_offer_id": id, "to_client_id": OMAR, "payment_type": "point"}),
        )
        .await;
    prop_assert_eq!(status, 200, "{}", order);
    prop_assert_eq!(
        exact(&order["purchased_point_amount"].to_string()),
        exact(&price)
    );
    prop_assert_eq!(
        exact(&order["point_amount"].to_string()),
        exact(&point_amount)
    );
    let charged = payer.clone() - balance_exact(app, SARA).await;
    prop_assert_eq!(charged, exact(&price));
    let credited = balance_exact(app, OMAR).await - recipient;
    prop_assert_eq!(credited, exact(&point_amount));
    let expected = domain::Points::new(payer - exact(&price)).to_text();
    prop_assert_eq!(app.balance_of(SARA).await, expected);
    Ok(())
}

#[tokio::test]
async fn an_offer_of_7_75_for_9_125_charges_exactly_9_125() {
    let app = spawn_app().await;
    let id = fresh_offer_id();
    let report = load(
        &app,
        &json!({"point_offers": [{"id": id, "point_amount": 7.75, "purchased_point_amount": 9.125,
                                  "amount": "1.15", "active": true}]}),
    )
    .await;
    assert!(report.rejected.is_empty(), "{:?}", report.rejected);
    let (_, offer) = app.offer(&id, SARA).await;
    assert_eq!(
        offer.to_string(),
        format!(
            r#"{{"id":"{id}","point_amount":7.75,"purchased_point_amount":9.125,"amount":"1.15"}}"#
        )
    );
    assert_eq!(app.balance_of(SARA).await, "700.25");
    let (status, order) = app
        .order(
            SARA,
            &json!({"point_offer_id": id, "to_client_id": OMAR, "payment_type": "point"}),
        )
        .await;
    assert_eq!(status, 200, "{order}");
    assert_eq!(order["point_amount"].to_string(), "7.75");
    assert_eq!(order["purchased_point_amount"].to_string(), "9.125");
    assert_eq!(app.balance_of(SARA).await, "691.125");
    assert_eq!(app.balance_of(OMAR).await, "7.75");
}

#[test]
fn a_point_order_charges_exactly_the_generated_price() {
    let runtime = runtime();
    let app = runtime.block_on(spawn_app());
    let positive = || amount().prop_filter("positive", |a| a.positive);
    let mut runner = TestRunner::new(ProptestConfig {
        cases: 24,
        ..ProptestConfig::default()
    });
    runner
        .run(&(positive(), positive()), |(points, price)| {
            runtime.block_on(point_order_charges_exactly(&app, points.text, price.text))
        })
        .unwrap();
}

#[tokio::test]
async fn integers_written_as_100_0_answer_as_100() {
    let app = spawn_app().await;
    let id = fresh_offer_id();
    load(
        &app,
        &json!({"point_offers": [{"id": id, "point_amount": number("100.0"),
                                  "purchased_point_amount": number("1.2e2"), "amount": "15.00"}]}),
    )
    .await;
    let (_, offer) = app.offer(&id, SARA).await;
    assert_eq!(offer["point_amount"].to_string(), "100");
    assert_eq!(offer["purchased_point_amount"].to_string(), "120");
}

/// The real binary: `point-service seed FILE` on a generated file with valid and bad rows
/// loads the valid ones, lists the bad ones on stderr and exits 3.
#[test]
fn the_seed_subcommand_loads_the_valid_rows_and_lists_the_bad_ones() {
    let runtime = runtime();
    let app = runtime.block_on(spawn_app());
    let mut runner = TestRunner::new(ProptestConfig {
        cases: 4,
        ..ProptestConfig::default()
    });
    runner
        .run(&vec(offer_row(), 2..6), |rows| {
            let ids: Vec<String> = rows.iter().map(|_| fresh_offer_id()).collect();
            let items: Vec<Value> = rows
                .iter()
                .zip(&ids)
                .map(|(row, id)| {
                    json!({
                        "id": id,
                        "point_amount": number(&row.point_amount.text),
                        "purchased_point_amount": row.purchased.as_ref().map(|p| number(&p.text)),
                        "amount": if row.sub_halala { "9.125" } else { "15.00" },
                    })
                })
                .collect();
            let file = std::env::temp_dir().join(format!("decimals-{}.json", fresh_offer_id()));
            // Written from the Value: serde_json writes each number with its own digits.
            std::fs::write(&file, json!({"point_offers": items}).to_string()).unwrap();
            let output = std::process::Command::new(env!("CARGO_BIN_EXE_point-service"))
                .args(["seed", file.to_str().unwrap()])
                .env("DATABASE_URL", app.database.url())
                .env("LOG_FORMAT", "pretty")
                .env("RUST_LOG", "warn")
                .output()
                .unwrap();
            std::fs::remove_file(&file).unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            let bad: Vec<usize> = (0..rows.len()).filter(|i| !rows[*i].valid()).collect();
            let expected_code = if bad.is_empty() { 0 } else { 3 };
            prop_assert_eq!(output.status.code(), Some(expected_code), "{}", stderr);
            for index in &bad {
                let line = format!(
                    "rejected point_offers[{index}] (id {}): {}: ",
                    ids[*index],
                    rows[*index].bad_field()
                );
                prop_assert!(stderr.contains(&line), "{} not in {}", line, stderr);
            }
            for (row, id) in rows.iter().zip(&ids) {
                let (status, body) = runtime.block_on(app.offer(id, SARA));
                if row.valid() {
                    prop_assert_eq!(status, 200);
                    prop_assert_eq!(
                        exact(&body["point_amount"].to_string()),
                        exact(&row.point_amount.text)
                    );
                } else {
                    prop_assert_eq!(status, 404);
                }
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn the_demo_fixture_loads_without_a_rejected_row() {
    let runtime = runtime();
    let app = runtime.block_on(spawn_app());
    let demo = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/fixtures/demo.json"
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_point-service"))
        .args(["seed", demo])
        .env("DATABASE_URL", app.database.url())
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test]
async fn ledger_rows_that_differ_past_four_decimals_are_two_entries_exactly() {
    let app = spawn_app().await;
    let rows = json!({"point_transactions": [
        {"client_id": NOURA, "kind": "earn", "points": number("1.00001"), "created_at": "2026-06-01T10:00:00Z"},
        {"client_id": NOURA, "kind": "earn", "points": "1.00002", "created_at": "2026-06-01T10:00:00Z"},
        {"client_id": NOURA, "kind": "spend", "points": number("0"), "created_at": "2026-06-01T10:00:00Z"}
    ]});
    let report = load(&app, &rows).await;
    assert_eq!(report.rejected.len(), 1, "{:?}", report.rejected);
    assert!(
        report.rejected[0]
            .to_string()
            .starts_with("point_transactions[2] (client_id 1003): points: must be a positive"),
        "{:?}",
        report.rejected
    );
    assert_eq!(balance_exact(&app, NOURA).await, exact("2.00003"));
    let again = load(&app, &rows).await;
    assert!(
        again
            .lines
            .contains(&"point_transactions: 0 added (2 already present, 1 rejected)".to_owned()),
        "{:?}",
        again.lines
    );
    assert_eq!(balance_exact(&app, NOURA).await, exact("2.00003"));
}
