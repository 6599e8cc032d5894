//! `point-service reconcile`, the daily settlement check: the real binary against a fake
//! payment service serving settlements in pages, with the ledger written by the real webhook.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpResponse, web};
use serde_json::{Value, json};

use crate::helpers::*;

/// The day checked, and the day before.
const DAY: &str = "2026-11-10";
const BEFORE: &str = "2026-11-09";

/// One page as the fake payment service answers it.
#[derive(Clone)]
enum Page {
    Captures(Vec<Value>),
    Status(u16),
    /// Answers after 3 s, past the check's 500 ms timeout.
    Slow,
}

/// What the fake was asked: `<day> <cursor or ->`, in order.
type Asked = Arc<Mutex<Vec<String>>>;

/// Plays the payment service's `GET /v1/settlements/{day}?cursor=`: page 1 without a cursor,
/// page n+1 with the cursor `c<n+1>`; a day it was not given is one empty page.
fn spawn_settlements(days: Vec<(&str, Vec<Page>)>) -> (String, Asked) {
    let days: Arc<HashMap<String, Vec<Page>>> = Arc::new(
        days.into_iter()
            .map(|(day, pages)| (day.to_owned(), pages))
            .collect(),
    );
    let asked: Asked = Arc::default();
    let recorded = asked.clone();
    let base = server::spawn_local(move || {
        let days = days.clone();
        let recorded = recorded.clone();
        App::new().route(
            "/v1/settlements/{day}",
            web::get().to(
                move |day: web::Path<String>, query: web::Query<HashMap<String, String>>| {
                    let days = days.clone();
                    let recorded = recorded.clone();
                    async move {
                        let cursor = query.get("cursor").cloned();
                        recorded
                            .lock()
                            .unwrap()
                            .push(format!("{day} {}", cursor.as_deref().unwrap_or("-")));
                        let pages = days.get(day.as_str()).cloned().unwrap_or_default();
                        let n = cursor
                            .as_deref()
                            .and_then(|c| c.strip_prefix('c'))
                            .and_then(|n| n.parse::<usize>().ok())
                            .unwrap_or(1);
                        let next = (n < pages.len()).then(|| format!("c{}", n + 1));
                        match pages.get(n - 1).cloned() {
                            None => HttpResponse::Ok().json(json!({"data": [], "next": null})),
                            Some(Page::Captures(data)) => {
                                HttpResponse::Ok().json(json!({"data": data, "next": next}))
                            }
                            Some(Page::Status(status)) => HttpResponse::build(
                                actix_web::http::StatusCode::from_u16(status).unwrap(),
                            )
                            .json(json!({"error": "boom"})),
                            Some(Page::Slow) => {
                                tokio::time::sleep(Duration::from_secs(3)).await;
                                HttpResponse::Ok().json(json!({"data": [], "next": null}))
                            }
                        }
                    }
                },
            ),
        )
    })
    .unwrap();
    (base, asked)
}

/// A capture in a settlement.
fn settled(id: &str, reference: &str, amount: i64, currency: &str, at: &str) -> Value {
    json!({"id": id, "reference": reference, "amount_minor": amount, "currency": currency, "captured_at": at})
}

/// Runs `point-service reconcile <args>` against the fake at `payments`: exit code, stdout,
/// stderr. Logs off, so stdout is the report alone.
async fn reconcile(app: &TestApp, payments: &str, args: &[&str]) -> (i32, String, String) {
    let args: Vec<&str> = std::iter::once("reconcile")
        .chain(args.iter().copied())
        .collect();
    let mut command = point_service_command(app.database.url(), &args);
    command
        .env("PAYMENT_SERVICE_URL", payments)
        .env("PAYMENT_SERVICE_TIMEOUT_MS", "500")
        .env("RUST_LOG", "off");
    // Awaited, not blocking: the fake payment service runs on this test's runtime.
    testkit::command::output(command).await
}

async fn checkout_for_omar(app: &TestApp) -> String {
    let (_, order) = app.order(SARA, &order_body(OMAR, "checkout")).await;
    order["correlation_id"].as_str().unwrap().to_owned()
}

/// Delivers a signed capture of `order` (15.00 SAR unless said otherwise) and moves its
/// arrival to `received_at`; the webhook's outcome.
async fn capture(
    app: &TestApp,
    event_id: &str,
    order: &str,
    payment_id: Option<&str>,
    received_at: &str,
) -> String {
    let mut data =
        json!({"reference": order, "provider": "sandbox", "amount_minor": 1500, "currency": "SAR"});
    if let Some(payment_id) = payment_id {
        data["payment_id"] = json!(payment_id);
    }
    let event = json!({"id": event_id, "type": "payment_captured", "data": data});
    let (status, body) = app
        .webhook(&event, WEBHOOK_SECRET, chrono::Utc::now().timestamp())
        .await;
    assert_eq!(status, 200, "{body}");
    app.sql(&format!(
        "UPDATE payment_events SET received_at = '{received_at}' WHERE id = '{event_id}'"
    ))
    .await;
    body["outcome"].as_str().unwrap().to_owned()
}

/// An order paid by the webhook with `payment_id`, credited at `received_at`.
async fn paid(app: &TestApp, event_id: &str, payment_id: &str, received_at: &str) -> String {
    let order = checkout_for_omar(app).await;
    assert_eq!(
        capture(app, event_id, &order, Some(payment_id), received_at).await,
        "captured"
    );
    order
}

/// The recorded outcome of `day`: (outcome, differences), checked within the last minute.
async fn recorded(app: &TestApp, day: &str) -> (String, i64) {
    for outcome in ["agrees", "differs", "unreadable"] {
        let n = app
            .count(&format!(
                "SELECT count(*) AS n FROM settlement_checks WHERE day = '{day}' AND outcome = '{outcome}'
                   AND checked_at > now() - interval '1 minute'"
            ))
            .await;
        if n == 1 {
            let differences = app
                .count(&format!(
                    "SELECT differences::bigint AS n FROM settlement_checks WHERE day = '{day}'"
                ))
                .await;
            return (outcome.to_owned(), differences);
        }
    }
    panic!("no recent settlement check recorded for {day}");
}

#[tokio::test]
async fn a_day_whose_captures_and_credits_agree_exits_0_and_is_recorded() {
    let app = spawn_app().await;
    let a = paid(&app, "evt_a", "pay_a", "2026-11-10T09:00:01Z").await;
    let b = paid(&app, "evt_b", "pay_b", "2026-11-10T23:59:59Z").await;
    let (payments, _) = spawn_settlements(vec![(
        DAY,
        vec![Page::Captures(vec![
            settled("pay_a", &a, 1500, "SAR", "2026-11-10T09:00:00Z"),
            settled("pay_b", &b, 1500, "SAR", "2026-11-10T23:59:58Z"),
        ])],
    )]);
    assert_eq!(
        reconcile(&app, &payments, &["--date", DAY]).await,
        (
            0,
            "settlement 2026-11-10: agrees (captures: 2, of them listed for refund: 0; card \
             credits applied that day: 2)\n"
                .to_owned(),
            String::new()
        )
    );
    assert_eq!(recorded(&app, DAY).await, ("agrees".to_owned(), 0));

    // Without --date: yesterday by the UTC clock (nothing captured, nothing credited).
    let yesterday = (chrono::Utc::now().date_naive() - chrono::Days::new(1)).to_string();
    assert_eq!(
        reconcile(&app, &payments, &[]).await,
        (
            0,
            format!(
                "settlement {yesterday}: agrees (captures: 0, of them listed for refund: 0; card \
                 credits applied that day: 0)\n"
            ),
            String::new()
        )
    );
    assert_eq!(recorded(&app, &yesterday).await, ("agrees".to_owned(), 0));
}

#[tokio::test]
async fn every_page_of_the_settlement_is_read() {
    let app = spawn_app().await;
    let a = paid(&app, "evt_a", "pay_a", "2026-11-10T08:00:00Z").await;
    let c = paid(&app, "evt_c", "pay_c", "2026-11-10T22:00:00Z").await;
    let open = checkout_for_omar(&app).await;
    let (payments, asked) = spawn_settlements(vec![(
        DAY,
        vec![
            Page::Captures(vec![settled(
                "pay_a",
                &a,
                1500,
                "SAR",
                "2026-11-10T07:59:59Z",
            )]),
            Page::Captures(vec![]),
            Page::Captures(vec![
                settled("pay_c", &c, 1500, "SAR", "2026-11-10T21:59:59Z"),
                settled("pay_z", &open, 1500, "SAR", "2026-11-10T23:00:00Z"),
            ]),
        ],
    )]);
    let (code, out, err) = reconcile(&app, &payments, &["--date", DAY]).await;
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            1,
            format!(
                "capture_not_credited\tpay_z\t{open}\tcaptured 15.00 SAR at \
                 2026-11-10T23:00:00Z\tnot credited, not listed for refund\n\
                 settlement 2026-11-10: 1 difference (captures: 3, of them listed for refund: 0; \
                 card credits applied that day: 2)\n"
            )
            .as_str(),
            ""
        )
    );
    assert_eq!(
        *asked.lock().unwrap(),
        [
            "2026-11-10 -",
            "2026-11-10 c2",
            "2026-11-10 c3",
            "2026-11-09 -"
        ]
    );
    assert_eq!(recorded(&app, DAY).await, ("differs".to_owned(), 1));
}

#[tokio::test]
async fn each_kind_of_difference_is_one_line() {
    let app = spawn_app().await;
    let lost = checkout_for_omar(&app).await;
    let amount = paid(&app, "evt_amount", "pay_amount", "2026-11-10T10:00:00Z").await;
    let currency = paid(&app, "evt_currency", "pay_currency", "2026-11-10T11:00:00Z").await;
    let ghost = paid(&app, "evt_ghost", "pay_ghost", "2026-11-10T12:00:00Z").await;
    let nameless = checkout_for_omar(&app).await;
    assert_eq!(
        capture(
            &app,
            "evt_nameless",
            &nameless,
            None,
            "2026-11-10T13:00:00Z"
        )
        .await,
        "captured"
    );
    // Credited the day before: not this day's credit, and its capture is nowhere either.
    paid(&app, "evt_earlier", "pay_earlier", "2026-11-09T12:00:00Z").await;
    // Credited to one order, captured (the settlement says) for another.
    let mixed = paid(&app, "evt_mixed", "pay_mixed", "2026-11-10T14:00:00Z").await;
    let payer = checkout_for_omar(&app).await;
    let (payments, _) = spawn_settlements(vec![
        (
            DAY,
            vec![Page::Captures(vec![
                settled("pay_lost", &lost, 1500, "SAR", "2026-11-10T09:00:00Z"),
                settled("pay_amount", &amount, 1400, "SAR", "2026-11-10T09:59:59Z"),
                settled(
                    "pay_currency",
                    &currency,
                    1500,
                    "USD",
                    "2026-11-10T10:59:59Z",
                ),
                settled("pay_mixed", &payer, 1500, "SAR", "2026-11-10T13:59:00Z"),
            ])],
        ),
        (BEFORE, vec![Page::Captures(vec![])]),
    ]);
    let (code, out, err) = reconcile(&app, &payments, &["--date", DAY]).await;
    assert_eq!((code, err.as_str()), (1, ""));
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            format!(
                "capture_not_credited\tpay_lost\t{lost}\tcaptured 15.00 SAR at \
                 2026-11-10T09:00:00Z\tnot credited, not listed for refund"
            ),
            format!(
                "amount_mismatch\tpay_amount\t{amount}\tcaptured 14.00 SAR at \
                 2026-11-10T09:59:59Z\tcredited 15.00 SAR at 2026-11-10T10:00:00Z (event \
                 evt_amount)"
            ),
            format!(
                "currency_mismatch\tpay_currency\t{currency}\tcaptured 15.00 USD at \
                 2026-11-10T10:59:59Z\tcredited 15.00 SAR at 2026-11-10T11:00:00Z (event \
                 evt_currency)"
            ),
            format!(
                "reference_mismatch\tpay_mixed\t{payer}\tcaptured 15.00 SAR at \
                 2026-11-10T13:59:00Z\tcredited 15.00 SAR at 2026-11-10T14:00:00Z (event \
                 evt_mixed) to order {mixed}"
            ),
            format!(
                "credit_without_capture\tpay_ghost\t{ghost}\tnot in the settlements of 2026-11-09 \
                 and 2026-11-10\tcredited 15.00 SAR at 2026-11-10T12:00:00Z (event evt_ghost)"
            ),
            format!(
                "credit_without_capture\t-\t{nameless}\tthe credit names no payment\tcredited \
                 15.00 SAR at 2026-11-10T13:00:00Z (event evt_nameless)"
            ),
            "settlement 2026-11-10: 6 differences (captures: 4, of them listed for refund: 0; \
             card credits applied that day: 5)"
                .to_owned(),
        ]
    );
    assert_eq!(recorded(&app, DAY).await, ("differs".to_owned(), 6));
}

#[tokio::test]
async fn a_capture_listed_for_refund_resolved_or_not_is_no_difference() {
    let app = spawn_app().await;
    let order = paid(&app, "evt_1", "pay_1", "2026-11-10T09:00:00Z").await;
    // The order is paid: two more captures of it are listed for refund, not credited.
    assert_eq!(
        capture(&app, "evt_2", &order, Some("pay_2"), "2026-11-10T09:05:00Z").await,
        "already_successful"
    );
    assert_eq!(
        capture(&app, "evt_3", &order, Some("pay_3"), "2026-11-10T09:10:00Z").await,
        "already_successful"
    );
    let unknown = "00000000-0000-4000-8000-000000000000";
    assert_eq!(
        capture(
            &app,
            "evt_4",
            unknown,
            Some("pay_4"),
            "2026-11-10T09:15:00Z"
        )
        .await,
        "unknown_order"
    );
    let resolve = point_service_command(
        app.database.url(),
        &[
            "unapplied-captures",
            "--resolve",
            "evt_3",
            "--note",
            "refund rf_3",
        ],
    )
    .output()
    .unwrap();
    assert!(resolve.status.success());
    let (payments, _) = spawn_settlements(vec![(
        DAY,
        vec![
            Page::Captures(vec![
                settled("pay_1", &order, 1500, "SAR", "2026-11-10T08:59:59Z"),
                settled("pay_2", &order, 1500, "SAR", "2026-11-10T09:04:59Z"),
            ]),
            Page::Captures(vec![
                settled("pay_3", &order, 1500, "SAR", "2026-11-10T09:09:59Z"),
                settled("pay_4", unknown, 1500, "SAR", "2026-11-10T09:14:59Z"),
            ]),
        ],
    )]);
    assert_eq!(
        reconcile(&app, &payments, &["--date", DAY]).await,
        (
            0,
            "settlement 2026-11-10: agrees (captures: 4, of them listed for refund: 3; card \
             credits applied that day: 1)\n"
                .to_owned(),
            String::new()
        )
    );
    assert_eq!(recorded(&app, DAY).await, ("agrees".to_owned(), 0));
}

#[tokio::test]
async fn a_credit_just_after_midnight_finds_its_capture_in_the_day_before() {
    let app = spawn_app().await;
    let order = paid(&app, "evt_m", "pay_m", "2026-11-10T00:00:30Z").await;
    let (payments, _) = spawn_settlements(vec![
        (DAY, vec![Page::Captures(vec![])]),
        (
            BEFORE,
            vec![
                Page::Captures(vec![]),
                Page::Captures(vec![settled(
                    "pay_m",
                    &order,
                    1500,
                    "SAR",
                    "2026-11-09T23:59:50Z",
                )]),
            ],
        ),
    ]);
    assert_eq!(
        reconcile(&app, &payments, &["--date", DAY]).await,
        (
            0,
            "settlement 2026-11-10: agrees (captures: 0, of them listed for refund: 0; card \
             credits applied that day: 1)\n"
                .to_owned(),
            String::new()
        )
    );
    // And the day before: its capture is credited, the next day.
    assert_eq!(
        reconcile(&app, &payments, &["--date", BEFORE]).await,
        (
            0,
            "settlement 2026-11-09: agrees (captures: 1, of them listed for refund: 0; card \
             credits applied that day: 0)\n"
                .to_owned(),
            String::new()
        )
    );
    assert_eq!(recorded(&app, DAY).await, ("agrees".to_owned(), 0));
    assert_eq!(recorded(&app, BEFORE).await, ("agrees".to_owned(), 0));
}

/// Plants a second card credit of `payment_id` to `order` behind the service's back, as a bug
/// or a hand-made insert would leave it: the applied event and the recipient's entry.
async fn credit_again(app: &TestApp, event_id: &str, order: &str, payment_id: &str, at: &str) {
    app.sql(&format!(
        "INSERT INTO payment_events (id, type, reference, payment_id, amount_minor, currency, outcome, received_at)
         VALUES ('{event_id}', 'payment_captured', '{order}', '{payment_id}', 1500, 'SAR', 'captured', '{at}');
         INSERT INTO point_entries (client_id, kind, points, order_correlation_id, created_at)
         SELECT recipient_id, CASE WHEN recipient_id = payer_id THEN 'purchase' ELSE 'gift_received' END,
                point_amount, correlation_id, '{at}'
         FROM point_orders WHERE correlation_id = '{order}';
         UPDATE point_accounts a SET balance = balance + o.point_amount
         FROM point_orders o WHERE o.correlation_id = '{order}' AND a.client_id = o.recipient_id"
    ))
    .await;
}

#[tokio::test]
async fn a_payment_credited_twice_is_reported_by_the_run_of_either_day() {
    let app = spawn_app().await;
    let order = paid(&app, "evt_1", "pay_1", "2026-11-10T09:00:00Z").await;
    let after = "2026-11-11";
    let (payments, _) = spawn_settlements(vec![
        (
            DAY,
            vec![Page::Captures(vec![settled(
                "pay_1",
                &order,
                1500,
                "SAR",
                "2026-11-10T08:59:59Z",
            )])],
        ),
        (after, vec![Page::Captures(vec![])]),
    ]);
    // Credited once: the day agrees.
    assert_eq!(
        reconcile(&app, &payments, &["--date", DAY]).await,
        (
            0,
            "settlement 2026-11-10: agrees (captures: 1, of them listed for refund: 0; card \
             credits applied that day: 1)\n"
                .to_owned(),
            String::new()
        )
    );

    // The next day, the same payment credited again.
    credit_again(&app, "evt_again", &order, "pay_1", "2026-11-11T08:00:00Z").await;
    let twice = format!(
        "credited_twice\tpay_1\t{order}\tcaptured 15.00 SAR at 2026-11-10T08:59:59Z\tcredited 15.00 SAR \
         at 2026-11-10T09:00:00Z (event evt_1); credited 15.00 SAR at 2026-11-11T08:00:00Z (event evt_again)\n"
    );
    assert_eq!(
        reconcile(&app, &payments, &["--date", DAY]).await,
        (
            1,
            format!(
                "{twice}settlement 2026-11-10: 1 difference (captures: 1, of them listed for refund: 0; \
                 card credits applied that day: 1)\n"
            ),
            String::new()
        )
    );
    assert_eq!(recorded(&app, DAY).await, ("differs".to_owned(), 1));
    // The day of the second credit: its capture is the day before's, and the first credit,
    // another day's, is read too.
    assert_eq!(
        reconcile(&app, &payments, &["--date", after]).await,
        (
            1,
            format!(
                "{twice}settlement 2026-11-11: 1 difference (captures: 0, of them listed for refund: 0; \
                 card credits applied that day: 1)\n"
            ),
            String::new()
        )
    );
    assert_eq!(recorded(&app, after).await, ("differs".to_owned(), 1));
}

#[tokio::test]
async fn a_payment_credited_to_two_orders_is_reported() {
    let app = spawn_app().await;
    let order = paid(&app, "evt_1", "pay_1", "2026-11-10T09:00:00Z").await;
    let other = checkout_for_omar(&app).await;
    credit_again(&app, "evt_other", &other, "pay_1", "2026-11-10T09:30:00Z").await;
    let (payments, _) = spawn_settlements(vec![(
        DAY,
        vec![Page::Captures(vec![settled(
            "pay_1",
            &order,
            1500,
            "SAR",
            "2026-11-10T08:59:59Z",
        )])],
    )]);
    assert_eq!(
        reconcile(&app, &payments, &["--date", DAY]).await,
        (
            1,
            format!(
                "credited_twice\tpay_1\t{order}, {other}\tcaptured 15.00 SAR at 2026-11-10T08:59:59Z\t\
                 credited 15.00 SAR at 2026-11-10T09:00:00Z (event evt_1) to order {order}; \
                 credited 15.00 SAR at 2026-11-10T09:30:00Z (event evt_other) to order {other}\n\
                 settlement 2026-11-10: 1 difference (captures: 1, of them listed for refund: 0; \
                 card credits applied that day: 2)\n"
            ),
            String::new()
        )
    );
    assert_eq!(recorded(&app, DAY).await, ("differs".to_owned(), 1));
}

#[tokio::test]
async fn an_unreadable_settlement_concludes_nothing_and_exits_2() {
    let app = spawn_app().await;
    let open = checkout_for_omar(&app).await;
    let pages = |second: Page| {
        vec![
            Page::Captures(vec![settled(
                "pay_z",
                &open,
                1500,
                "SAR",
                "2026-11-10T09:00:00Z",
            )]),
            second,
        ]
    };
    // A day that differed, then a run that cannot read it: nothing concluded, so the day
    // stays differing (a failed read never hides what a run found).
    let (payments, _) = spawn_settlements(vec![(DAY, pages(Page::Captures(vec![])))]);
    assert_eq!(reconcile(&app, &payments, &["--date", DAY]).await.0, 1);
    assert_eq!(recorded(&app, DAY).await, ("differs".to_owned(), 1));

    let (payments, asked) = spawn_settlements(vec![(DAY, pages(Page::Status(500)))]);
    assert_eq!(
        reconcile(&app, &payments, &["--date", DAY]).await,
        (
            2,
            String::new(),
            "point-service: the settlement of 2026-11-10 cannot be read (page 2): the payment \
             service answered 500; nothing concluded\n"
                .to_owned()
        )
    );
    assert_eq!(recorded(&app, DAY).await, ("differs".to_owned(), 1));
    assert_eq!(
        *asked.lock().unwrap(),
        ["2026-11-10 -", "2026-11-10 c2"],
        "nothing read after the failed page"
    );

    // A page that does not come in time (PAYMENT_SERVICE_TIMEOUT_MS=500), here the day
    // before's, of a day not checked before: recorded as unreadable.
    let later = "2026-11-11";
    let (payments, _) = spawn_settlements(vec![
        (later, vec![Page::Captures(vec![])]),
        (DAY, vec![Page::Slow]),
    ]);
    assert_eq!(
        reconcile(&app, &payments, &["--date", later]).await,
        (
            2,
            String::new(),
            "point-service: the settlement of 2026-11-10 cannot be read (page 1): the payment \
             service did not answer in time; nothing concluded\n"
                .to_owned()
        )
    );
    assert_eq!(recorded(&app, later).await, ("unreadable".to_owned(), 0));
    assert_eq!(recorded(&app, DAY).await, ("differs".to_owned(), 1));
}

#[tokio::test]
async fn bad_arguments_or_configuration_exit_2_and_record_nothing() {
    let app = spawn_app().await;
    let (payments, asked) = spawn_settlements(vec![]);
    let (code, out, err) = reconcile(&app, &payments, &["--date", "2026-13-01"]).await;
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains("invalid value '2026-13-01' for '--date <YYYY-MM-DD>'"),
        "{err}"
    );
    let tomorrow = chrono::Utc::now().date_naive().succ_opt().unwrap();
    let today = chrono::Utc::now().date_naive();
    assert_eq!(
        reconcile(&app, &payments, &["--date", &tomorrow.to_string()]).await,
        (
            2,
            String::new(),
            format!("point-service: --date {tomorrow} has not begun (the UTC date is {today})\n")
        )
    );
    let (code, _, err) = reconcile(&app, "", &["--date", DAY]).await;
    assert_eq!(
        (code, err.as_str()),
        (
            2,
            "point-service: configuration error: PAYMENT_SERVICE_URL is required but not set\n"
        )
    );
    assert!(asked.lock().unwrap().is_empty());
    assert_eq!(
        app.count("SELECT count(*) AS n FROM settlement_checks")
            .await,
        0
    );
}

#[tokio::test]
async fn the_help_names_the_kinds_and_the_exit_codes() {
    let output = point_service_command("postgres://unused", &["reconcile", "--help"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for text in [
        "capture_not_credited",
        "credit_without_capture",
        "amount_mismatch",
        "currency_mismatch",
        "reference_mismatch",
        "credited_twice",
        "Exit codes: 0 the day agrees; 1 there is at least one difference",
        "2 nothing concluded",
    ] {
        assert!(help.contains(text), "{text} not in {help}");
    }
}
