//! A point service that records every credit, and what the credit tests read back.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, web};
use diesel::QueryableByName;
use diesel::sql_types::{Bool, Integer, Text};
use diesel_async::RunQueryDsl;
use order_service::config::CreditTarget;
use order_service::gift_cards::retry;
use order_service::state::Credit;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::helpers::*;

/// A point service (and legacy system: it answers `/api/v1/points/add` the same way) that
/// applies each reference once, as the real one does, and remembers every call. While
/// held, calls wait at a gate until released; `fail_next` answers that many calls with 503.
#[derive(Clone)]
pub(super) struct Ledger {
    pub(super) url: String,
    pub(super) state: Arc<Mutex<LedgerState>>,
    /// Calls received so far, to wait on.
    calls: Arc<watch::Sender<usize>>,
    /// True: calls go through; false: they wait.
    open: Arc<watch::Sender<bool>>,
}

#[derive(Default)]
pub(super) struct LedgerState {
    /// Calls per reference, whatever their answer.
    sent: BTreeMap<String, usize>,
    /// 2xx answers per reference.
    credited: BTreeMap<String, usize>,
    /// Answer the next this many calls with 503.
    fail_next: usize,
    /// References with a call in flight, and those that got a second call while one was.
    in_flight: BTreeSet<String>,
    pub(super) overlaps: Vec<String>,
    /// (path, Idempotency-Key, body) of every call.
    pub(super) requests: Vec<(String, Option<String>, Value)>,
}

impl Ledger {
    pub(super) fn start() -> Self {
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

    pub(super) fn hold(&self) {
        self.open.send_replace(false);
    }

    pub(super) fn release(&self) {
        self.open.send_replace(true);
    }

    pub(super) fn fail_next(&self, n: usize) {
        self.state.lock().unwrap().fail_next = n;
    }

    pub(super) async fn wait_for_calls(&self, n: usize) {
        let mut calls = self.calls.subscribe();
        tokio::time::timeout(WAIT, calls.wait_for(|c| *c >= n))
            .await
            .expect("the credit calls arrive")
            .unwrap();
    }

    pub(super) fn sent(&self) -> BTreeMap<String, usize> {
        self.state.lock().unwrap().sent.clone()
    }

    pub(super) fn credited(&self) -> BTreeMap<String, usize> {
        self.state.lock().unwrap().credited.clone()
    }
}

/// How long a test waits for something the service does on its own.
pub(super) const WAIT: Duration = Duration::from_secs(30);

/// Options with this ledger as the point service and, when `fast`, a retry task that runs
/// every 20 ms and backs off to 40 ms.
pub(super) fn on_ledger(ledger: &Ledger, fast: bool) -> Options {
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
pub(super) struct Row {
    #[diesel(sql_type = Text)]
    pub(super) status: String,
    #[diesel(sql_type = Integer)]
    pub(super) attempts: i32,
    #[diesel(sql_type = Bool)]
    pub(super) answered: bool,
    #[diesel(sql_type = Bool)]
    pub(super) held: bool,
}

/// The redemption of `code`: status, attempts, whether its 200 was given, whether leased.
pub(super) async fn redemption(app: &TestApp, code: &str) -> Row {
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

pub(super) async fn count(app: &TestApp, query: &str) -> i64 {
    app.database.count(query).await
}

/// Waits (polling the database) until `query` counts no row; `what` names them if it times out.
pub(super) async fn wait_until_none(app: &TestApp, query: &str, what: &str) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while count(app, query).await > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} after {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits (polling the database) until no redemption is pending.
pub(super) async fn wait_until_none_pending(app: &TestApp) {
    wait_until_none(
        app,
        "SELECT count(*) AS n FROM gift_card_redemptions WHERE status = 'pending'",
        "a redemption is still pending",
    )
    .await;
}

/// Another replica's pool and credit client on the app's database and the ledger.
pub(super) fn other_replica(app: &TestApp, ledger: &Ledger) -> (db::Pool, Credit) {
    let pool = db::build_pool(&db::PoolSettings::new(app.database.url(), 2)).unwrap();
    (
        pool,
        replica_credit(CreditTarget::PointService, &ledger.url, None),
    )
}

/// A replica's credit client: new redemptions go to `target` (`USE_POINT_SERVICE`), the
/// point service is at `point_url`, the legacy system at `legacy_url` (`LEGACY_URL`).
pub(super) fn replica_credit(
    target: CreditTarget,
    point_url: &str,
    legacy_url: Option<&str>,
) -> Credit {
    Credit {
        target,
        legacy_url: legacy_url.map(str::to_owned),
        point_service: point_url.to_owned(),
        signer: testkit::identity::signer(service_identity::Service::Order),
        http: telemetry::client::http_client(
            Duration::from_secs(10),
            telemetry::client::DEFAULT_IDLE,
        )
        .unwrap(),
    }
}

/// Another replica's retry task, for one pass at a time: its own pool and client on the
/// app's database.
pub(super) async fn other_replica_pass(app: &TestApp, ledger: &Ledger) -> retry::Pass {
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

pub(super) const IN_PROGRESS: &str = "The code is being redeemed, try again shortly";
pub(super) const USED: &str = "The code has already been used";
