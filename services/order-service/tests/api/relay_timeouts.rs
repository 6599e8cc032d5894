//! The relay's two waits: the two pay routes (`POST …/point-orders/{id}/pay/card` and
//! `…/pay/session`) wait `POINT_SERVICE_PAY_TIMEOUT_MS`, every other relayed route
//! `POINT_SERVICE_TIMEOUT_MS`; past its wait a route is answered 504 `POINT_SERVICE_TIMEOUT`
//! in envelope B. Shown with the two set small through their variables, against a point
//! service stand-in that holds each request until the test lets it answer, or for good.
//!
//! What is asserted is an order of events and lower bounds, which a loaded machine cannot
//! break: a pay route sent before an ordinary one is still waiting when the ordinary one has
//! had its 504, and then gets the point service's answer; an unanswered pay route gets its
//! 504 no sooner than the pay wait, after the ordinary route's. The only upper bound is the
//! ordinary route's 504 coming before the pay wait, ten times its own.

use std::net::TcpListener;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use db::testing::TestDatabase;
use order_service::config::Config;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::upstream::{RawUpstream, write_answer};

/// `POINT_SERVICE_TIMEOUT_MS` and `POINT_SERVICE_PAY_TIMEOUT_MS` in these tests.
const ORDINARY_WAIT: Duration = Duration::from_millis(300);
const PAY_WAIT: Duration = Duration::from_millis(3000);

const ORDER: &str = "0f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11";

/// The answer to a relay that gave up.
fn timed_out() -> Value {
    json!({"success": false, "error": {"code": "POINT_SERVICE_TIMEOUT",
        "message": "Point service did not respond in time; the request outcome is unknown"}})
}

/// The app with its configuration read from the variables a deployment sets, the two waits
/// among them; relaying to `point_url`. Its base URL, and the database it must outlive.
async fn app_relaying_to(point_url: &str) -> (String, TestDatabase) {
    let database = testkit::seed::seeded_database(
        catalog_db::MIGRATIONS,
        order_service::seed::load,
        &fixture(),
    )
    .await;
    let ordinary = ORDINARY_WAIT.as_millis().to_string();
    let pay = PAY_WAIT.as_millis().to_string();
    let mut env = server::Env::from_vars([
        ("POINT_SERVICE_URL", point_url),
        ("POINT_SERVICE_TIMEOUT_MS", ordinary.as_str()),
        ("POINT_SERVICE_PAY_TIMEOUT_MS", pay.as_str()),
    ]);
    let config = Config::from_env(
        &mut env,
        testkit::config::common("order-service"),
        testkit::config::database(database.url(), 4),
    );
    let config = env.finish(config).unwrap();
    assert_eq!(
        (config.relay_timeout, config.pay_timeout),
        (ORDINARY_WAIT, PAY_WAIT)
    );
    let _ = telemetry::init(&config.common.telemetry);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(order_service::startup::build(config, listener).unwrap());
    (base, database)
}

/// A flag threads wait on: set once, for good.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    changed: Condvar,
}

impl Gate {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.changed.notify_all();
    }

    fn wait(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.changed.wait(open).unwrap();
        }
    }
}

/// Opens the gate when dropped: the stand-in's held connections end with the test.
struct OpenOnDrop(Arc<Gate>);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

/// A relayed request sent at `sent`: its status, body and when it was answered.
struct Answered {
    status: u16,
    body: Value,
    at: Instant,
}

async fn send(app: &str, method: &str, path: &str) -> Answered {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let mut request = client
        .request(method.parse().unwrap(), format!("{app}{path}"))
        .bearer_auth(token(1001));
    if method == "POST" {
        request = request.json(&json!({"id": "card_visa_4242", "cvv": "123"}));
    }
    let (status, body) = answer(request.send().await.unwrap()).await;
    Answered {
        status,
        body,
        at: Instant::now(),
    }
}

/// Waits until the stand-in has received a request for each of `targets`.
async fn wait_until_received(upstream: &RawUpstream, targets: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let seen = upstream.seen();
        if targets
            .iter()
            .all(|t| seen.iter().any(|s| s == t.as_bytes()))
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the point service did not receive {targets:?} within 30 s; it got {:?}",
            seen.iter()
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_pay_route_waits_the_pay_timeout_where_another_route_has_its_504_at_the_ordinary_one() {
    let card = format!("/api/v2/client/point-orders/{ORDER}/pay/card");
    let session = format!("/api/v2/client/point-orders/{ORDER}/pay/session");
    let points = "/api/v2/client/points";

    // The stand-in answers pay/card once `release` opens, and nothing else ever (until
    // the test ends).
    let release = Arc::new(Gate::default());
    let finished = Arc::new(Gate::default());
    let _finish = OpenOnDrop(finished.clone());
    let upstream = {
        let (release, finished, card) = (release.clone(), finished.clone(), card.clone());
        RawUpstream::start(move |_, target, stream| {
            if target == card.as_bytes() {
                release.wait();
                write_answer(stream, 200, Some("application/json"), br#"{"paid":true}"#);
            } else {
                finished.wait();
            }
        })
    };
    let (app, _database) = app_relaying_to(&upstream.url).await;

    // The two pay routes first, held by the point service.
    let sent = Instant::now();
    let paying_card = tokio::spawn({
        let (app, card) = (app.clone(), card.clone());
        async move { send(&app, "POST", &card).await }
    });
    let paying_session = tokio::spawn({
        let (app, session) = (app.clone(), session.clone());
        async move { send(&app, "POST", &session).await }
    });
    wait_until_received(&upstream, &[&card, &session]).await;

    // Then an ordinary route: its 504 at the ordinary wait, long before the pay wait.
    let ordinary_sent = Instant::now();
    let ordinary = send(&app, "GET", points).await;
    assert_eq!(
        (ordinary.status, &ordinary.body),
        (504, &timed_out()),
        "GET {points}"
    );
    let waited = ordinary.at - ordinary_sent;
    assert!(
        waited >= ORDINARY_WAIT && waited < PAY_WAIT,
        "GET {points} was answered 504 after {waited:?}: the ordinary wait is {ORDINARY_WAIT:?}"
    );

    // pay/card, sent before it and so waiting longer than the ordinary wait by now, is still
    // waiting: let the point service answer, and the app gets that answer.
    release.open();
    let card_answer = paying_card.await.unwrap();
    assert_eq!(
        (card_answer.status, &card_answer.body),
        (200, &json!({"paid": true})),
        "POST {card}, answered after {:?}: still waiting past the ordinary wait, it must get \
         the point service's answer",
        card_answer.at - sent
    );
    assert!(card_answer.at > ordinary.at && card_answer.at - sent >= ORDINARY_WAIT);

    // pay/session, never answered: its 504 at the pay wait, after the ordinary route's.
    let session_answer = paying_session.await.unwrap();
    assert_eq!(
        (session_answer.status, &session_answer.body),
        (504, &timed_out()),
        "POST {session}"
    );
    let waited = session_answer.at - sent;
    assert!(
        waited >= PAY_WAIT && session_answer.at > ordinary.at,
        "POST {session} was answered 504 after {waited:?}: the pay wait is {PAY_WAIT:?}"
    );
}
