//! The clients' load: point orders and gift codes, every answer recorded.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use e2e::money::{self, CLIENTS};
use serde_json::{Value, json};

/// Gift codes the fixture gets (`FO-0000` on), more than a run redeems.
pub(crate) const GIFT_CODES: usize = 5000;
/// What each of them credits (`e2e::loaded_databases` makes them worth 10 points).
pub(crate) const CODE_POINTS: &str = "10";
/// The demo offer the load buys ([`money::OFFER`]): 100 points for 120 (`e2e::demo`), what an
/// order left unanswered would have moved.
pub(crate) const OFFER_POINTS: &str = "100";
pub(crate) const OFFER_PRICE_POINTS: &str = "120";

/// One answer the clients got: when it was sent, when it came, what it was.
pub(crate) struct Answer {
    pub(crate) action: &'static str,
    pub(crate) sent: Instant,
    pub(crate) came: Instant,
    pub(crate) status: u16,
    pub(crate) code: String,
}

/// A point order answered 200: what the ledger must hold for it.
#[derive(Clone)]
pub(crate) struct Acknowledged {
    pub(crate) token: &'static str,
    pub(crate) payer: i64,
    pub(crate) friend: i64,
    pub(crate) id: String,
    /// When the answer came.
    pub(crate) at: Instant,
    /// The answer's `point_amount` (credited to the friend) and `purchased_point_amount`
    /// (charged to the payer), as decimal text.
    pub(crate) points: String,
    pub(crate) price: String,
}

#[derive(Default)]
pub(crate) struct Observed {
    pub(crate) answers: Vec<Answer>,
    /// Point orders answered 200.
    pub(crate) orders: Vec<Acknowledged>,
    /// Point orders whose Idempotency-Key never got a 200 (an error, then a 4xx or no
    /// answer): (payer, friend, key). One may have been applied.
    pub(crate) unanswered: Vec<(i64, i64, String)>,
    /// Gift codes answered 200: (redeemer, code).
    pub(crate) redeemed: Vec<(i64, String)>,
    /// Gift codes asked for and never answered 200: (redeemer, code). One may have been
    /// credited (a 5xx whose redemption went through, then a 409 or a 401).
    pub(crate) tried: Vec<(i64, String)>,
}

/// A JSON number or string as decimal text (`100`, `9.125`).
fn decimal_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub(crate) struct Load {
    pub(crate) http: reqwest::Client,
    pub(crate) order: String,
    pub(crate) observed: Mutex<Observed>,
    pub(crate) stop: AtomicBool,
    pub(crate) next_code: AtomicU64,
}

impl Load {
    /// One request to the order service; status 0 when it could not be reached.
    async fn request(
        &self,
        path: &str,
        token: &str,
        key: Option<&str>,
        body: &Value,
    ) -> (u16, Value) {
        let mut request = self
            .http
            .post(format!("{}{path}", self.order))
            .bearer_auth(token)
            .json(body);
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        let Ok(response) = request.send().await else {
            return (0, Value::Null);
        };
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    fn record(&self, action: &'static str, sent: Instant, status: u16, body: &Value) {
        // Envelope B's code, or envelope C's status (the order service's own routes).
        let code = match (body["error"]["code"].as_str(), &body["statusCode"]) {
            (Some(code), _) => code.to_owned(),
            (None, Value::Number(n)) => format!("statusCode {n}"),
            _ => String::new(),
        };
        self.observed.lock().unwrap().answers.push(Answer {
            action,
            sent,
            came: Instant::now(),
            status,
            code,
        });
    }

    /// A client: point orders for a friend (the same Idempotency-Key until the order is
    /// answered, as the app retries), every third round a gift code.
    pub(crate) async fn worker(&self, worker: usize) {
        let mut round = 0usize;
        while !self.stop.load(Ordering::Relaxed) {
            round += 1;
            let (payer, token) = CLIENTS[(worker + round) % CLIENTS.len()];
            let (friend, _) = CLIENTS[(worker + round + 1) % CLIENTS.len()];
            let key = format!("failover-{worker}-{round}");
            loop {
                let sent = Instant::now();
                let order = json!({"point_offer_id": money::OFFER, "to_client_id": friend, "payment_type": "point"});
                let (status, body) = self
                    .request("/api/v2/client/point-orders", token, Some(&key), &order)
                    .await;
                self.record("point order", sent, status, &body);
                if status == 200 {
                    let id = body["correlation_id"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    self.observed.lock().unwrap().orders.push(Acknowledged {
                        token,
                        payer,
                        friend,
                        id,
                        at: Instant::now(),
                        points: decimal_text(&body["point_amount"]),
                        price: decimal_text(&body["purchased_point_amount"]),
                    });
                    break;
                }
                if (400..500).contains(&status) && status != 429 {
                    self.observed
                        .lock()
                        .unwrap()
                        .unanswered
                        .push((payer, friend, key.clone()));
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            if round.is_multiple_of(3) {
                let n = self.next_code.fetch_add(1, Ordering::Relaxed) as usize;
                if n < GIFT_CODES {
                    let code = format!("FO-{n:04}");
                    let mut answered = false;
                    for _ in 0..600 {
                        let sent = Instant::now();
                        let (status, body) = self
                            .request(
                                "/api/v2/client/gift-card-code",
                                token,
                                None,
                                &json!({"code": code}),
                            )
                            .await;
                        self.record("gift code", sent, status, &body);
                        if status == 200 {
                            answered = true;
                            self.observed
                                .lock()
                                .unwrap()
                                .redeemed
                                .push((payer, code.clone()));
                        }
                        if status < 500 && status != 429 {
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    if !answered {
                        self.observed.lock().unwrap().tried.push((payer, code));
                    }
                }
            }
        }
    }
}

/// The answers the spec and `docs/decisions.md` name for each action while a database is
/// down, and nothing else (a 4xx the load cannot cause, a 502 from a point service that never
/// went away, no answer at all, are findings).
///
/// A point order (envelope B, through the relay): 200; 401 `UNAUTHORIZED` (the auth
/// database is down, so the caller lookup fails: "an outage looks like a bad token"); 500
/// `INTERNAL_ERROR` (a database that is down); 503 `SERVICE_UNAVAILABLE` (busy: the pool's
/// wait, a lock or statement timeout); 504 `POINT_SERVICE_TIMEOUT` (the relay's 10 s ran
/// out while the point service waited on a frozen server).
///
/// A gift code (envelope C, the order service's own route): 200; 401; 409 (the retry task
/// holds the redemption, or an earlier attempt whose answer was lost redeemed it); 500; 502
/// (redeemed, the credit still pending: the retry task finishes it); 503.
pub(crate) fn specified(answer: &Answer) -> bool {
    match answer.action {
        "point order" => matches!(
            (answer.status, answer.code.as_str()),
            (200, _)
                | (401, "UNAUTHORIZED")
                | (500, "INTERNAL_ERROR")
                | (503, "SERVICE_UNAVAILABLE")
                | (504, "POINT_SERVICE_TIMEOUT")
        ),
        "gift code" => matches!(
            (answer.status, answer.code.as_str()),
            (200, _)
                | (401, "statusCode 401")
                | (409, "statusCode 409")
                | (500, "statusCode 500")
                | (502, "statusCode 502")
                | (503, "statusCode 503")
        ),
        _ => false,
    }
}
