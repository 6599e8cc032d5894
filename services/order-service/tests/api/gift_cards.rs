//! `POST /gift-card-code`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, web};
use diesel::QueryableByName;
use diesel::sql_types::{Bool, Integer, Text};
use diesel_async::RunQueryDsl;
use futures_util::StreamExt;
use futures_util::future::join_all;
use futures_util::stream::FuturesUnordered;
use order_service::config::CreditTarget;
use order_service::gift_cards::{retry, tries};
use order_service::state::Credit;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::helpers::*;

#[tokio::test]
async fn a_code_credits_through_the_point_service_once() {
    let app = spawn_app().await;
    assert_eq!(
        app.redeem(1001, " WELCOME-100 ").await,
        (
            200,
            json!({"message": "The code was redeemed", "code": "WELCOME-100", "points": "100"})
        )
    );
    let credits = app.credits.lock().unwrap().clone();
    assert_eq!(credits.len(), 1);
    assert_eq!(
        (
            credits[0]["client_id"].clone(),
            credits[0]["points"].clone(),
            credits[0]["reason"].clone(),
            credits[0]["token"].clone()
        ),
        (
            json!(1001),
            json!("100"),
            json!("gift_card"),
            json!(INTERNAL)
        )
    );
    assert!(
        credits[0]["reference"]
            .as_str()
            .unwrap()
            .starts_with("gift-card:")
    );
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        error_c(409, "The code has already been used")
    );
    assert_eq!(
        app.redeem(1002, "WELCOME-100").await,
        error_c(409, "The code has already been used")
    );
    assert_eq!(app.credits.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn unknown_or_inactive_codes_are_404_and_missing_tokens_401() {
    let app = spawn_app().await;
    assert_eq!(
        app.redeem(1001, "NOPE").await,
        error_c(404, "The code not exist")
    );
    assert_eq!(
        app.redeem(1001, "OLD-50").await,
        error_c(404, "The code not exist")
    );
    let response = app
        .client
        .post(app.url("/api/v2/client/gift-card-code"))
        .json(&json!({"code": "WELCOME-100"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer(response).await,
        error_c(401, "Missing or invalid authorization header")
    );
    let response = app
        .client
        .post(app.url("/api/v2/client/gift-card-code"))
        .bearer_auth("bad")
        .json(&json!({"code": "X"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer(response).await,
        error_c(401, "Invalid or expired token")
    );
    let response = app
        .client
        .post(app.url("/api/v2/client/gift-card-code"))
        .bearer_auth(token(1001))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer(response).await, error_c(400, "code is required"));
}

#[tokio::test]
async fn wrong_codes_are_limited_per_client() {
    let app = spawn_app_with(Options {
        tries_per_client: 3,
        ..Options::default()
    })
    .await;
    for _ in 0..3 {
        assert_eq!(app.redeem(1001, "GUESS").await.0, 404);
    }
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        error_c(429, "Too many attempts, try again later")
    );
    assert_eq!(
        app.redeem(1002, "WELCOME-100").await.0,
        200,
        "another client is not limited"
    );
}

#[tokio::test]
async fn twenty_concurrent_tries_claim_the_code_once() {
    let app = spawn_app().await;
    let tries = (0..20).map(|i| app.redeem(2000 + i, "RAMADAN-250"));
    let outcomes = join_all(tries).await;
    let ok = outcomes.iter().filter(|(s, _)| *s == 200).count();
    let used = outcomes.iter().filter(|(s, _)| *s == 409).count();
    assert_eq!((ok, used), (1, 19));
    assert_eq!(app.credits.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_failed_credit_stays_pending_and_the_retry_credits_the_same_redemption() {
    let app = spawn_app().await;
    app.credits_fail
        .store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        error_c(502, "The points could not be credited yet, try again")
    );
    assert_eq!(
        app.redeem(1002, "WELCOME-100").await.0,
        409,
        "the code is this client's now"
    );
    app.credits_fail
        .store(false, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await.0,
        200,
        "the retry goes on with the pending redemption"
    );
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await.0,
        409,
        "and once credited, the code is used"
    );
    let credits = app.credits.lock().unwrap().clone();
    assert_eq!(credits.len(), 1);
    assert_eq!(credits[0]["reference"], "gift-card:1");
}

/// The spec's row: 500 `AUTH_SERVICE_URL not set`, in production too (its text is not an
/// internal detail to hide, it tells the operator what to fix).
#[tokio::test]
async fn without_auth_service_url_the_route_answers_500_naming_it_even_in_production() {
    let app = spawn_app_with(Options {
        auth_service: false,
        app_env: AppEnv::Production,
        ..Options::default()
    })
    .await;
    let response = app
        .client
        .post(app.url("/api/v2/client/gift-card-code"))
        .bearer_auth(token(1001))
        .json(&json!({"code": "WELCOME-100"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(
        response.text().await.unwrap(),
        r#"{"message":"AUTH_SERVICE_URL not set","statusCode":500}"#
    );
    assert!(app.credits.lock().unwrap().is_empty());
}

/// A point service (and legacy system: it answers `/api/v1/points/add` the same way) that
/// applies each reference once, as the real one does, and remembers every call. While
/// held, calls wait at a gate until released; `fail_next` answers that many calls with 503.
#[derive(Clone)]
struct Ledger {
    url: String,
    state: Arc<Mutex<LedgerState>>,
    /// Calls received so far, to wait on.
    calls: Arc<watch::Sender<usize>>,
    /// True: calls go through; false: they wait.
    open: Arc<watch::Sender<bool>>,
}

#[derive(Default)]
struct LedgerState {
    /// Calls per reference, whatever their answer.
    sent: BTreeMap<String, usize>,
    /// 2xx answers per reference.
    credited: BTreeMap<String, usize>,
    /// Answer the next this many calls with 503.
    fail_next: usize,
    /// References with a call in flight, and those that got a second call while one was.
    in_flight: BTreeSet<String>,
    overlaps: Vec<String>,
    /// (path, Idempotency-Key, body) of every call.
    requests: Vec<(String, Option<String>, Value)>,
}

impl Ledger {
    fn start() -> Self {
        let state: Arc<Mutex<LedgerState>> = Arc::default();
        let calls = Arc::new(watch::channel(0usize).0);
        let open = Arc::new(watch::channel(true).0);
        let (s, c, o) = (state.clone(), calls.clone(), open.clone());
        let url = server::spawn_local(move || {
            let (s, c, o) = (s.clone(), c.clone(), o.clone());
            App::new().default_service(web::to(move |req: HttpRequest, body: web::Json<Value>| {
                let (state, calls, open) = (s.clone(), c.clone(), o.clone());
                async move {
                    let reference = body["reference"].as_str().unwrap_or_default().to_owned();
                    {
                        let mut state = state.lock().unwrap();
                        if !state.in_flight.insert(reference.clone()) {
                            state.overlaps.push(reference.clone());
                        }
                        let key = req
                            .headers()
                            .get("idempotency-key")
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned);
                        state
                            .requests
                            .push((req.path().to_owned(), key, body.0.clone()));
                        *state.sent.entry(reference.clone()).or_default() += 1;
                    }
                    calls.send_modify(|n| *n += 1);
                    let mut gate = open.subscribe();
                    let _ = gate.wait_for(|open| *open).await;
                    let mut state = state.lock().unwrap();
                    state.in_flight.remove(&reference);
                    if state.fail_next > 0 {
                        state.fail_next -= 1;
                        return HttpResponse::ServiceUnavailable().finish();
                    }
                    *state.credited.entry(reference.clone()).or_default() += 1;
                    HttpResponse::Ok().json(json!({"reference": reference}))
                }
            }))
        })
        .unwrap();
        Self {
            url,
            state,
            calls,
            open,
        }
    }

    fn hold(&self) {
        self.open.send_replace(false);
    }

    fn release(&self) {
        self.open.send_replace(true);
    }

    fn fail_next(&self, n: usize) {
        self.state.lock().unwrap().fail_next = n;
    }

    async fn wait_for_calls(&self, n: usize) {
        let mut calls = self.calls.subscribe();
        tokio::time::timeout(WAIT, calls.wait_for(|c| *c >= n))
            .await
            .expect("the credit calls arrive")
            .unwrap();
    }

    fn sent(&self) -> BTreeMap<String, usize> {
        self.state.lock().unwrap().sent.clone()
    }

    fn credited(&self) -> BTreeMap<String, usize> {
        self.state.lock().unwrap().credited.clone()
    }
}

/// How long a test waits for something the service does on its own.
const WAIT: Duration = Duration::from_secs(30);

/// Options with this ledger as the point service and, when `fast`, a retry task that runs
/// every 20 ms and backs off to 40 ms.
fn on_ledger(ledger: &Ledger, fast: bool) -> Options {
    let mut options = Options {
        point_service_url: Some(ledger.url.clone()),
        ..Options::default()
    };
    if fast {
        options.gift_card_retry.interval = Duration::from_millis(20);
        options.gift_card_retry.max_backoff = Duration::from_millis(40);
    }
    options
}

#[derive(QueryableByName, Debug, PartialEq, Eq)]
struct Row {
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Integer)]
    attempts: i32,
    #[diesel(sql_type = Bool)]
    answered: bool,
    #[diesel(sql_type = Bool)]
    held: bool,
}

/// The redemption of `code`: status, attempts, whether its 200 was given, whether leased.
async fn redemption(app: &TestApp, code: &str) -> Row {
    let mut conn = app.database.connect().await;
    diesel::sql_query(
        "SELECT status, attempts, answered_at IS NOT NULL AS answered, \
                COALESCE(lease_until > now(), false) AS held \
         FROM gift_card_redemptions WHERE code = $1",
    )
    .bind::<Text, _>(code)
    .get_result(&mut conn)
    .await
    .unwrap()
}

async fn count(app: &TestApp, query: &str) -> i64 {
    app.database.count(query).await
}

/// Waits (polling the database) until no redemption is pending.
async fn wait_until_none_pending(app: &TestApp) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while count(
        app,
        "SELECT count(*) AS n FROM gift_card_redemptions WHERE status = 'pending'",
    )
    .await
        > 0
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "a redemption is still pending after {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Another replica's pool and credit client on the app's database and the ledger.
fn other_replica(app: &TestApp, ledger: &Ledger) -> (db::Pool, Credit) {
    let pool = db::build_pool(&db::PoolSettings::new(app.database.url(), 2)).unwrap();
    let credit = Credit {
        target: CreditTarget::PointService,
        point_service: ledger.url.clone(),
        internal_token: server::Secret::new(INTERNAL),
        http: telemetry::client::http_client(Duration::from_secs(10)).unwrap(),
    };
    (pool, credit)
}

/// Another replica's retry task, for one pass at a time: its own pool and client on the
/// app's database.
async fn other_replica_pass(app: &TestApp, ledger: &Ledger) -> retry::Pass {
    let (pool, credit) = other_replica(app, ledger);
    let (_stop, running) = watch::channel(false);
    retry::pass(
        &pool,
        &credit,
        &Options::default().gift_card_retry,
        &running,
    )
    .await
    .unwrap()
}

const IN_PROGRESS: &str = "The code is being redeemed, try again shortly";
const USED: &str = "The code has already been used";

/// The same client's concurrent retries: while the first is being credited (the ledger
/// holds its call), every other one answers 409; then the first answers the one 200.
#[tokio::test]
async fn concurrent_retries_of_one_client_get_one_200_and_one_credit_call() {
    let ledger = Ledger::start();
    let app = spawn_app_with(on_ledger(&ledger, false)).await;
    ledger.hold();
    let mut answers: FuturesUnordered<_> =
        (0..9).map(|_| app.redeem(1001, "RAMADAN-250")).collect();
    let mut early = Vec::new();
    for _ in 0..8 {
        let next = tokio::time::timeout(WAIT, answers.next()).await;
        early.push(
            next.expect("the others answer while the credit is held")
                .unwrap(),
        );
    }
    assert_eq!(early, vec![error_c(409, IN_PROGRESS); 8]);
    assert_eq!(app.redeem(1002, "RAMADAN-250").await, error_c(409, USED));
    ledger.release();
    let last = answers.next().await.unwrap();
    assert_eq!(
        last,
        (
            200,
            json!({"message": "The code was redeemed", "code": "RAMADAN-250", "points": "250"})
        )
    );
    assert_eq!(app.redeem(1001, "RAMADAN-250").await, error_c(409, USED));
    assert_eq!(
        ledger.sent(),
        BTreeMap::from([("gift-card:1".to_owned(), 1)])
    );
    assert_eq!(
        redemption(&app, "RAMADAN-250").await,
        Row {
            status: "credited".into(),
            attempts: 1,
            answered: true,
            held: false
        }
    );
}

/// Different clients at once: one holds the code, the rest are told it is used.
#[tokio::test]
async fn concurrent_redemptions_by_different_clients_get_one_200() {
    let ledger = Ledger::start();
    let app = spawn_app_with(on_ledger(&ledger, false)).await;
    ledger.hold();
    let mut answers: FuturesUnordered<_> = (0..9)
        .map(|i| app.redeem(5000 + i, "WELCOME-100"))
        .collect();
    let mut early = Vec::new();
    for _ in 0..8 {
        let next = tokio::time::timeout(WAIT, answers.next()).await;
        early.push(
            next.expect("the others answer while the credit is held")
                .unwrap(),
        );
    }
    assert_eq!(early, vec![error_c(409, USED); 8]);
    ledger.release();
    assert_eq!(answers.next().await.unwrap().0, 200);
    assert_eq!(
        ledger.sent(),
        BTreeMap::from([("gift-card:1".to_owned(), 1)])
    );
}

/// The credit fails twice, then lands: the service's own retry task credits it, once; the
/// client's next request is the one 200, the one after is 409.
#[tokio::test]
async fn a_failed_credit_is_retried_by_the_service_until_it_lands_once() {
    let ledger = Ledger::start();
    ledger.fail_next(2);
    let app = spawn_app_with(on_ledger(&ledger, true)).await;
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        error_c(502, "The points could not be credited yet, try again")
    );
    wait_until_none_pending(&app).await;
    assert_eq!(
        ledger.sent(),
        BTreeMap::from([("gift-card:1".to_owned(), 3)])
    );
    assert_eq!(
        ledger.credited(),
        BTreeMap::from([("gift-card:1".to_owned(), 1)])
    );
    assert_eq!(
        redemption(&app, "WELCOME-100").await,
        Row {
            status: "credited".into(),
            attempts: 3,
            answered: false,
            held: false
        }
    );
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        (
            200,
            json!({"message": "The code was redeemed", "code": "WELCOME-100", "points": "100"})
        ),
        "the client's retry is the one 200"
    );
    assert_eq!(app.redeem(1001, "WELCOME-100").await, error_c(409, USED));
    assert_eq!(app.redeem(1002, "WELCOME-100").await, error_c(409, USED));
    assert_eq!(
        ledger.sent()["gift-card:1"],
        3,
        "nothing sent after it landed"
    );
    let metrics = app.get("/metrics").await.1;
    let metrics = metrics.as_str().unwrap();
    for line in [
        r#"gift_card_credit_attempts_total{by="retry",outcome="credited"}"#,
        r#"gift_card_credit_attempts_total{by="request",outcome="failed"}"#,
        "gift_card_credits_pending",
        "gift_card_credit_oldest_pending_seconds",
    ] {
        assert!(metrics.contains(line), "/metrics has {line}");
    }
}

/// While the retry task is crediting a redemption (the ledger holds its call), no other
/// replica takes it and its owner gets 409; once it lands, the owner's next request is
/// the one 200.
#[tokio::test]
async fn a_credit_in_flight_is_taken_by_no_other_replica_nor_request() {
    let ledger = Ledger::start();
    let app = spawn_app_with(on_ledger(&ledger, true)).await;
    ledger.hold();
    // As a request leaves it whose credit failed.
    app.sql(
        "INSERT INTO gift_card_redemptions (code, client_id, points, attempts, last_error) \
         VALUES ('WELCOME-100', 1001, 100, 1, 'credit answered 503 Service Unavailable')",
    )
    .await;
    ledger.wait_for_calls(1).await;
    assert_eq!(
        other_replica_pass(&app, &ledger).await,
        retry::Pass::default()
    );
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        error_c(409, IN_PROGRESS)
    );
    assert_eq!(app.redeem(1002, "WELCOME-100").await, error_c(409, USED));
    ledger.release();
    wait_until_none_pending(&app).await;
    assert_eq!(app.redeem(1001, "WELCOME-100").await.0, 200);
    assert_eq!(app.redeem(1001, "WELCOME-100").await, error_c(409, USED));
    assert_eq!(
        ledger.sent(),
        BTreeMap::from([("gift-card:1".to_owned(), 1)])
    );
    assert!(ledger.state.lock().unwrap().overlaps.is_empty());
}

/// Two app instances on one database, both retrying: thirty pending redemptions are each
/// sent exactly once, never two calls for one reference at a time.
#[tokio::test]
async fn two_replicas_never_send_one_credit_twice() {
    let ledger = Ledger::start();
    let options = on_ledger(&ledger, true);
    let app = spawn_app_with(on_ledger(&ledger, true)).await;
    start(app.database.url(), &ledger.url, &options);
    app.sql(
        "INSERT INTO gift_card_codes (code, points, active) \
             SELECT 'BULK-' || i, 10, true FROM generate_series(1, 30) AS i; \
         INSERT INTO gift_card_redemptions (code, client_id, points) \
             SELECT 'BULK-' || i, 3000 + i, 10 FROM generate_series(1, 30) AS i",
    )
    .await;
    wait_until_none_pending(&app).await;
    let sent = ledger.sent();
    assert_eq!(sent.len(), 30);
    assert!(
        sent.values().all(|&n| n == 1),
        "each reference sent once: {sent:?}"
    );
    assert!(ledger.state.lock().unwrap().overlaps.is_empty());
    assert_eq!(
        count(
            &app,
            "SELECT count(*) AS n FROM gift_card_redemptions WHERE status = 'credited' AND attempts = 1"
        )
        .await,
        30
    );
}

/// A holder that died mid-credit leaves its lease: nobody takes the redemption until the
/// lease runs out, then a retry task sends the same reference.
#[tokio::test]
async fn a_dead_holders_redemption_is_resumed_once_its_lease_runs_out() {
    let ledger = Ledger::start();
    let app = spawn_app_with(on_ledger(&ledger, false)).await;
    app.sql(
        "INSERT INTO gift_card_redemptions (code, client_id, points, attempts, lease_until) \
         VALUES ('WELCOME-100', 1001, 100, 1, now() + interval '1 hour')",
    )
    .await;
    assert_eq!(
        other_replica_pass(&app, &ledger).await,
        retry::Pass::default()
    );
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        error_c(409, IN_PROGRESS)
    );
    app.sql("UPDATE gift_card_redemptions SET lease_until = now() - interval '1 second'")
        .await;
    assert_eq!(
        other_replica_pass(&app, &ledger).await,
        retry::Pass {
            tried: 1,
            credited: 1
        }
    );
    assert_eq!(
        ledger.sent(),
        BTreeMap::from([("gift-card:1".to_owned(), 1)])
    );
    assert_eq!(app.redeem(1001, "WELCOME-100").await.0, 200);
}

/// The legacy credit carries the reference in its body and as Idempotency-Key, the same
/// on the retry after a failure, so the legacy side can apply it once.
#[tokio::test]
async fn the_legacy_credit_carries_the_reference_on_every_try() {
    let ledger = Ledger::start();
    let app = spawn_app_with(Options {
        legacy_url: Some(ledger.url.clone()),
        ..Options::default()
    })
    .await;
    ledger.fail_next(1);
    assert_eq!(app.redeem(1001, "WELCOME-100").await.0, 502);
    assert_eq!(app.redeem(1001, "WELCOME-100").await.0, 200);
    let requests = ledger.state.lock().unwrap().requests.clone();
    let sent = json!({"client_id": 1001, "points": "100", "reference": "gift-card:1"});
    let expected = (
        "/api/v1/points/add".to_owned(),
        Some("gift-card:1".to_owned()),
        sent,
    );
    assert_eq!(requests, vec![expected.clone(), expected]);
}

/// A burst of parallel wrong codes from one client stops exactly at its limit.
#[tokio::test]
async fn a_burst_of_wrong_codes_from_one_client_stops_at_the_limit() {
    let app = spawn_app_with(Options {
        tries_per_client: 5,
        ..Options::default()
    })
    .await;
    let guesses: Vec<String> = (0..40).map(|i| format!("GUESS-{i}")).collect();
    let answers = join_all(guesses.iter().map(|code| app.redeem(1001, code))).await;
    let statuses = answers.iter().fold(BTreeMap::new(), |mut by, (status, _)| {
        *by.entry(*status).or_insert(0) += 1;
        by
    });
    assert_eq!(statuses, BTreeMap::from([(404, 5), (429, 35)]));
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM gift_card_tries").await,
        5
    );
}

/// And from one address, whichever clients it speaks for.
#[tokio::test]
async fn a_burst_of_wrong_codes_from_one_address_stops_at_the_limit() {
    let app = spawn_app_with(Options {
        tries_per_ip: 5,
        tries_per_client: 1000,
        ..Options::default()
    })
    .await;
    let guess = |i: i64| {
        let request = app
            .client
            .post(app.url("/api/v2/client/gift-card-code"))
            .bearer_auth(token(4000 + i))
            .header("x-forwarded-for", "203.0.113.9")
            .json(&json!({"code": format!("GUESS-{i}")}));
        async move { request.send().await.unwrap().status().as_u16() }
    };
    let statuses =
        join_all((0..40).map(guess))
            .await
            .into_iter()
            .fold(BTreeMap::new(), |mut by, status| {
                *by.entry(status).or_insert(0) += 1;
                by
            });
    assert_eq!(statuses, BTreeMap::from([(404, 5), (429, 35)]));
}

/// The retry task ends when asked to (as `serve` asks it on SIGTERM or SIGINT), even in the
/// middle of its wait between passes.
#[tokio::test]
async fn the_retry_task_stops_when_asked() {
    let ledger = Ledger::start();
    let app = spawn_app_with(on_ledger(&ledger, false)).await;
    let (pool, credit) = other_replica(&app, &ledger);
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(retry::run(
        pool,
        credit,
        Options::default().gift_card_retry,
        stopped,
    ));
    stop.send(true).unwrap();
    tokio::time::timeout(WAIT, task)
        .await
        .expect("the task ends")
        .unwrap();
}

/// Requests waiting for the client lock of the wrong-code limits, on `app`'s database.
async fn waiting_for_client_lock(app: &TestApp) -> i64 {
    count(
        app,
        &format!(
            "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted \
             AND classid = {} AND objsubid = 2 \
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            tries::CLIENT_LOCK
        ),
    )
    .await
}

/// Waits until `n` requests wait for the client lock, or `done` is set.
async fn until_waiting(app: &TestApp, n: i64, done: &AtomicBool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !done.load(Ordering::SeqCst) && waiting_for_client_lock(app).await < n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{n} requests never waited for the client lock"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// At one wrong code below the limit, a burst of 30 requests gets at most one code looked
/// at: the right code sent among 29 wrong ones is not redeemed once a wrong one reached the
/// limit. The test holds the client's lock (a gate) until the 29 wrong requests and then
/// the right one wait for it, so the right one comes last.
#[tokio::test]
async fn a_burst_at_the_limit_gets_one_code_looked_at_even_with_the_right_one_among_them() {
    let app = spawn_app_with(Options {
        tries_per_client: 5,
        pool_size: 40,
        ..Options::default()
    })
    .await;
    for i in 0..4 {
        assert_eq!(app.redeem(1001, &format!("EARLIER-{i}")).await.0, 404);
    }
    let mut gate = app.database.connect().await;
    diesel::sql_query("SELECT pg_advisory_lock($1, hashtext('1001'))")
        .bind::<Integer, _>(tries::CLIENT_LOCK)
        .execute(&mut gate)
        .await
        .unwrap();
    let right_answered = AtomicBool::new(false);
    let wrong = join_all((0..29).map(|i| {
        let code = format!("GUESS-{i}");
        let app = &app;
        async move { app.redeem(1001, &code).await.0 }
    }));
    let right = async {
        until_waiting(&app, 29, &AtomicBool::new(false)).await;
        let status = app.redeem(1001, "WELCOME-100").await.0;
        right_answered.store(true, Ordering::SeqCst);
        status
    };
    let gatekeeper = async {
        // The old code looked the right one up without waiting: it answers at once.
        until_waiting(&app, 30, &right_answered).await;
        diesel::sql_query("SELECT pg_advisory_unlock($1, hashtext('1001'))")
            .bind::<Integer, _>(tries::CLIENT_LOCK)
            .execute(&mut gate)
            .await
            .unwrap();
    };
    let (wrong, right, ()) = tokio::join!(wrong, right, gatekeeper);
    let statuses = wrong
        .into_iter()
        .chain([right])
        .fold(BTreeMap::new(), |mut by, status| {
            *by.entry(status).or_insert(0) += 1;
            by
        });
    assert_eq!(
        statuses,
        BTreeMap::from([(404, 1), (429, 29)]),
        "one code looked at (404s + 200s), the rest 429"
    );
    assert_eq!(right, 429);
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM gift_card_redemptions").await,
        0
    );
    assert!(app.credits.lock().unwrap().is_empty());
}

/// A code deactivated while its redemption is pending: the owner's next request resumes
/// it (a redemption that exists decides), it is no wrong guess.
#[tokio::test]
async fn a_pending_redemption_of_a_code_deactivated_since_is_resumed_not_404() {
    let app = spawn_app().await;
    app.credits_fail.store(true, Ordering::SeqCst);
    assert_eq!(app.redeem(1001, "WELCOME-100").await.0, 502);
    let mut conn = app.database.connect().await;
    diesel::sql_query("UPDATE gift_card_codes SET active = false WHERE code = 'WELCOME-100'")
        .execute(&mut conn)
        .await
        .unwrap();
    app.credits_fail.store(false, Ordering::SeqCst);
    assert_eq!(
        app.redeem(1001, "WELCOME-100").await,
        (
            200,
            json!({"message": "The code was redeemed", "code": "WELCOME-100", "points": "100"})
        )
    );
    assert_eq!(
        app.redeem(1002, "WELCOME-100").await,
        error_c(409, USED),
        "someone else is told it is used, not that it does not exist"
    );
    assert_eq!(
        count(&app, "SELECT count(*) AS n FROM gift_card_tries").await,
        0,
        "no wrong guess counted"
    );
    assert_eq!(app.credits.lock().unwrap().len(), 1);
}

/// The credit carries the code's exact points, not the answer's 4-decimal text: 1.23456
/// credits 1.23456 (not 1.2346, points invented), 0.00001 credits 0.00001 (not "0", which
/// the point service refuses). The answer's `points` stays the spec's text.
#[tokio::test]
async fn the_credit_carries_the_exact_points() {
    let app = spawn_app().await;
    let mut conn = app.database.connect().await;
    diesel::sql_query(
        "INSERT INTO gift_card_codes (code, points, active) VALUES ('EXACT', 1.23456, true), ('TINY', 0.00001, true)",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    assert_eq!(
        app.redeem(1001, "EXACT").await,
        (
            200,
            json!({"message": "The code was redeemed", "code": "EXACT", "points": "1.2346"})
        )
    );
    assert_eq!(
        app.redeem(1001, "TINY").await,
        (
            200,
            json!({"message": "The code was redeemed", "code": "TINY", "points": "0"})
        )
    );
    let sent: Vec<Value> = app
        .credits
        .lock()
        .unwrap()
        .iter()
        .map(|c| c["points"].clone())
        .collect();
    assert_eq!(sent, vec![json!("1.23456"), json!("0.00001")]);
}

/// A credit the point service refuses (a 4xx other than 409 and 429) is not hammered: its
/// next try by the retry task is hours away, where a failure that may heal waits the
/// ordinary backoff.
#[tokio::test]
async fn a_refused_credit_waits_long_before_its_next_try() {
    let refusing = server::spawn_local(|| {
        App::new().default_service(web::to(|| async {
            HttpResponse::UnprocessableEntity().json(json!({"message": "no such client"}))
        }))
    })
    .unwrap();
    for (url, code, refused) in [
        (Some(refusing), "WELCOME-100", true),
        (None, "RAMADAN-250", false),
    ] {
        let mut options = Options {
            point_service_url: url,
            ..Options::default()
        };
        // The ordinary first backoff: one interval.
        options.gift_card_retry.interval = Duration::from_secs(60);
        let app = spawn_app_with(options).await;
        app.credits_fail.store(true, Ordering::SeqCst);
        assert_eq!(app.redeem(1001, code).await.0, 502, "{code}");
        assert_eq!(
            count(
                &app,
                "SELECT count(*) AS n FROM gift_card_redemptions \
                 WHERE status = 'pending' AND next_attempt_at > now() + interval '1 hour'"
            )
            .await,
            i64::from(refused),
            "{code}"
        );
        if refused {
            assert_eq!(
                count(
                    &app,
                    "SELECT count(*) AS n FROM gift_card_redemptions \
                     WHERE last_error = 'credit refused with 422'"
                )
                .await,
                1
            );
        }
    }
}
