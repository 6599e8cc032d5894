//! The clients' load: point orders and gift codes, every answer recorded.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use e2e::money::{self, CLIENTS};
use serde_json::{Value, json};

/// Gift codes the fixture gets (`FO-0000` on), more than a run redeems.
pub(crate) const GIFT_CODES: usize = 5000;

/// One answer the clients got: when it was sent, when it came, what it was.
pub(crate) struct Answer {
    pub(crate) action: &'static str,
    pub(crate) sent: Instant,
    pub(crate) came: Instant,
    pub(crate) status: u16,
    pub(crate) code: String,
}

#[derive(Default)]
pub(crate) struct Observed {
    pub(crate) answers: Vec<Answer>,
    /// Point orders answered 200: (payer token, correlation id, when the answer came).
    pub(crate) orders: Vec<(&'static str, String, Instant)>,
    /// Gift codes answered 200.
    pub(crate) redeemed: Vec<String>,
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
            let (_, token) = CLIENTS[(worker + round) % CLIENTS.len()];
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
                    self.observed
                        .lock()
                        .unwrap()
                        .orders
                        .push((token, id, Instant::now()));
                    break;
                }
                if (400..500).contains(&status) && status != 429 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            if round.is_multiple_of(3) {
                let n = self.next_code.fetch_add(1, Ordering::Relaxed) as usize;
                if n < GIFT_CODES {
                    let code = format!("FO-{n:04}");
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
                            self.observed.lock().unwrap().redeemed.push(code.clone());
                        }
                        if status < 500 && status != 429 {
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis(100)).await;
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
