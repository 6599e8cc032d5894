//! The load: the clients' passes (balance, history, offers, point and card orders, gift
//! codes), the money paths' awkward flows (lost webhooks, lost pay answers, lost pay answers
//! whose payment is made late and events of an unknown type among them), and what disrupts
//! them: the chaos that kills and restarts the point service, the order service and
//! PostgreSQL, or (with replicas) the rolling restart and the sampler of each replica's and
//! database's connections.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::NaiveDate;
use e2e::LocalCluster;
use e2e::replicated::{ReplicatedStack, SERVICES};
use e2e::stack::Stack;
use serde_json::{Value, json};
use tokio::sync::RwLock;

use crate::checks::connect;
use crate::{CLIENTS, GIFT_CODES, OFFER, PRE_STOP, RUSH_CODES};

/// The card ids the sandbox treats apart (services/payment-sandbox): captured at once with
/// no webhook (a lost webhook), and captured at once with no webhook and the pay call's
/// answer lost (502 from the payment service, 500 `INTERNAL_ERROR` from the pay route).
pub(crate) const SILENT_CARD: &str = "silent-soak";
pub(crate) const LOST_CARD: &str = "lost-soak";

/// A late-lost card id (services/payment-sandbox): the sandbox holds the pay call `hold`
/// (past the point service's wait) and answers 502, and makes the payment, captured or
/// (`declined`) declined, with no webhook, only after the first read of the order's payments
/// by reference since the call; before that no read-back knows of it.
pub(crate) fn late_card(declined: bool, hold: Duration) -> String {
    let prefix = if declined { "latedecline" } else { "latelost" };
    format!("{prefix}{}-soak", hold.as_secs())
}

/// A card order paid with a late-lost card.
#[derive(Debug, Clone)]
pub(crate) struct LateLost {
    /// The order's correlation id.
    pub(crate) id: String,
    /// The card's payment is made declined (`latedecline`), else captured (`latelost`).
    pub(crate) declined: bool,
    /// What the pay answered: `500` (the point service's wait ran out: the expected
    /// answer), another status (a kill's), or `unreachable`.
    pub(crate) answered: String,
    /// How long the pay took: a 500 after the point service's whole wait is its timeout,
    /// so the call certainly reached the sandbox, which must then make the payment once the
    /// point service reads the order's payments back.
    pub(crate) took: Duration,
}

/// A card payment waiting on its 3-D Secure page.
pub(crate) struct Payment {
    id: String,
    page: String,
}

/// A checkout order paid twice by card: the order as created, its id, and both payments.
pub(crate) struct Tapped {
    created: Value,
    id: String,
    older: Payment,
    newer: Payment,
}

/// What the clients saw, for the report and the checks.
#[derive(Default)]
pub(crate) struct Observed {
    /// (action, outcome) → count.
    pub(crate) counts: BTreeMap<(String, String), u64>,
    /// Orders the app was told are successful: (payer token, correlation id).
    pub(crate) successful: Vec<(&'static str, String)>,
    /// Card orders whose 3-D Secure approval the point service took.
    pub(crate) approved: Vec<(&'static str, String)>,
    /// Gift codes the app was told were redeemed.
    pub(crate) redeemed: Vec<String>,
    /// Card orders that must be credited exactly once: (payer token, correlation id).
    pub(crate) credited_once: Vec<(&'static str, String)>,
    /// Captures the point service could not apply because a decline had failed the order:
    /// (payer token, correlation id, payment id). Each must be listed for a refund.
    pub(crate) unapplied: Vec<(&'static str, String, String)>,
    /// Rush codes: how many 200s each got across all clients.
    pub(crate) rush: BTreeMap<String, u64>,
    /// Every order of the capture-after-decline flow, whatever its buttons answered: a press
    /// whose answer was lost (a kill) may still have been applied.
    pub(crate) late_capture_orders: Vec<String>,
    /// Card orders paid with a `silent` card whose pay answered 200 (captured, its webhook
    /// never sent): (correlation id, payment id). The payment sync credits them.
    pub(crate) silent: Vec<(String, String)>,
    /// Card orders paid with a `lost` card whose pay answered the expected 500
    /// `INTERNAL_ERROR` (captured, the answer lost): correlation ids. The sync finds the
    /// payment by the order's reference and credits it.
    pub(crate) lost: Vec<String>,
    /// Card orders paid with a late-lost card, whatever the pay answered (a kill may have
    /// cut the call after it reached the sandbox): the checks find which have a payment at
    /// the sandbox, and each of those must end credited once (captured) or `payment_failed`
    /// with nothing credited (declined), or be listed by `point-service unsynced-orders`.
    pub(crate) late_lost: Vec<LateLost>,
    /// Events of an unknown type (`payment.captured`) sent after a `silent` payment and
    /// answered 200 `unknown_type`: (correlation id, payment id). Their orders are synced at
    /// once.
    pub(crate) unknown_type: Vec<(String, String)>,
    /// Captures whose webhook the point service never took, the Approve button pressed again
    /// and again as a gateway retries: payment ids (the checks find them neither credited nor
    /// listed).
    pub(crate) undelivered: Vec<String>,
    /// Answers a flow did not expect that are no 5xx (an unknown-type event answered a 4xx or
    /// another outcome, a `lost` or late-lost card's pay answered 2xx or a 4xx but the auth
    /// outage's 401).
    pub(crate) wrong: Vec<String>,
    /// 5xx answers outside the specified ones.
    pub(crate) unexpected: Vec<String>,
}

impl Observed {
    pub(crate) fn count(&mut self, action: &str, outcome: impl Into<String>) {
        *self
            .counts
            .entry((action.to_owned(), outcome.into()))
            .or_default() += 1;
    }
}

/// What a call may answer besides what every call may.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    Usual,
    /// A pay with a `lost` card: the payment service captured and lost its answer (502), and
    /// the pay route answers 500 `INTERNAL_ERROR` (docs/design.md, "Payment service": a 5xx
    /// of the payment service becomes 500 `INTERNAL_ERROR`); with a late-lost card, its
    /// timeout does. That answer is this call's expected one, in the rolling mode too; no
    /// other call's.
    AnswerLost,
}

/// Whether a 5xx answer is one the spec and docs/design.md name for the call. Under the
/// chaos: the relay's 502/504, an internal error (envelope B or C; the database killed), a
/// busy pool (503), and the gift-card credit still pending (502). Under a rolling restart
/// (`strict`), which must lose nothing: only contention's 503. In both, a `lost` card's pay
/// (`Expect::AnswerLost`) may answer 500 `INTERNAL_ERROR`.
pub(crate) fn specified_5xx(status: u16, body: &Value, strict: bool, expect: Expect) -> bool {
    let code = body["error"]["code"].as_str();
    if expect == Expect::AnswerLost && status == 500 && code == Some("INTERNAL_ERROR") {
        return true;
    }
    let contention =
        status == 503 && (code.is_some() || body["statusCode"] == 503 || body["status"] == 503);
    if strict {
        return contention;
    }
    match status {
        500 => code == Some("INTERNAL_ERROR") || body["statusCode"] == 500 || body["status"] == 500,
        502 => code == Some("POINT_SERVICE_UNAVAILABLE") || body["statusCode"] == 502,
        503 => contention,
        504 => code == Some("POINT_SERVICE_TIMEOUT"),
        _ => false,
    }
}

/// What runs under the load.
pub(crate) enum System {
    /// One process per service, killed and restarted by [`Soak::chaos`].
    One(Box<RwLock<Stack>>),
    /// Replicas behind the balancer, restarted one at a time by [`Soak::rolling`]; the
    /// balancer's addresses never change.
    Replicated {
        stack: Box<tokio::sync::Mutex<ReplicatedStack>>,
        order: String,
        points: String,
    },
}

/// What disrupted the load.
pub(crate) enum Disruptions {
    /// Kills and restarts by part.
    Kills(BTreeMap<&'static str, u64>),
    /// Rolling restart steps: the replica and how long it took from SIGTERM to exit.
    Restarts(Vec<(String, Duration)>),
}

pub(crate) struct Soak {
    /// Rolling mode: the most connections seen at once, by replica (its pool's open
    /// connections) and by database (PostgreSQL's pg_stat_activity).
    pub(crate) peaks: Mutex<BTreeMap<String, u64>>,
    pub(crate) system: System,
    /// Rolling mode: every failed request counts, not only the unspecified 5xx.
    pub(crate) strict: bool,
    pub(crate) observed: Mutex<Observed>,
    pub(crate) http: reqwest::Client,
    pub(crate) stop: AtomicBool,
    pub(crate) next_code: AtomicU64,
    pub(crate) next_rush: AtomicU64,
    pub(crate) next_event: AtomicU64,
    /// Late-lost pays so far: every other one is a `latedecline` card.
    pub(crate) next_late: AtomicU64,
    /// How long the sandbox holds a late-lost card's pay call (the card id carries it;
    /// `crate::late_hold`).
    pub(crate) late_hold: Duration,
    /// The UTC day the load began on: the checks read every day's settlement since.
    pub(crate) started_on: NaiveDate,
}

impl Soak {
    /// One request; `None` when the service could not be reached at all (it was killed).
    pub(crate) async fn call(
        &self,
        action: &str,
        method: &str,
        url: String,
        token: Option<&str>,
        key: Option<&str>,
        body: Option<&Value>,
    ) -> Option<(u16, Value)> {
        self.call_expecting(action, method, url, token, key, body, Expect::Usual)
            .await
    }

    /// [`Soak::call`] for a call that may answer more than the usual (`expect`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn call_expecting(
        &self,
        action: &str,
        method: &str,
        url: String,
        token: Option<&str>,
        key: Option<&str>,
        body: Option<&Value>,
        expect: Expect,
    ) -> Option<(u16, Value)> {
        let mut request = self.http.request(method.parse().unwrap(), &url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) => {
                let mut observed = self.observed.lock().unwrap();
                observed.count(action, "unreachable");
                if self.strict {
                    observed
                        .unexpected
                        .push(format!("{action} {method} {url}: unreachable: {e}"));
                }
                return None;
            }
        };
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        let mut observed = self.observed.lock().unwrap();
        observed.count(action, status.to_string());
        // A rolling restart must lose nothing: only contention (the specified 503) may
        // still answer 5xx, and a valid token is never refused.
        let failed = (self.strict && status == 401)
            || (status >= 500 && !specified_5xx(status, &body, self.strict, expect));
        if failed {
            observed
                .unexpected
                .push(format!("{action} {method} {url}: {status} {body}"));
        }
        Some((status, body))
    }

    pub(crate) async fn order_base(&self) -> String {
        match &self.system {
            System::One(stack) => stack.read().await.order.base.clone(),
            System::Replicated { order, .. } => order.clone(),
        }
    }

    pub(crate) async fn points_base(&self) -> String {
        match &self.system {
            System::One(stack) => stack.read().await.points.base.clone(),
            System::Replicated { points, .. } => points.clone(),
        }
    }

    /// The payment sandbox's base URL (never restarted: it keeps its payments in memory).
    pub(crate) async fn sandbox_base(&self) -> String {
        match &self.system {
            System::One(stack) => stack.read().await.sandbox.base.clone(),
            System::Replicated { stack, .. } => stack.lock().await.sandbox.base.clone(),
        }
    }

    /// A client pass: read the balance, the history and the offers, buy with points for a
    /// friend, buy by card (approved or declined), redeem a gift code, or one of the awkward
    /// money flows.
    pub(crate) async fn worker(&self, worker: usize) {
        let mut round = 0usize;
        while !self.stop.load(Ordering::Relaxed) {
            round += 1;
            let (_, token) = CLIENTS[(worker + round) % CLIENTS.len()];
            let (friend, _) = CLIENTS[(worker + round + 1) % CLIENTS.len()];
            let order = self.order_base().await;
            // What an order-making pass is known by (its Idempotency-Key, its card ids).
            let key = format!("soak-{worker}-{round}");
            match round % 17 {
                0..=2 => {
                    self.call(
                        "balance",
                        "GET",
                        format!("{order}/api/v2/client/points"),
                        Some(token),
                        None,
                        None,
                    )
                    .await;
                }
                3 => {
                    self.call(
                        "history",
                        "GET",
                        format!("{order}/api/v2/client/point-history?page=1&limit=5"),
                        Some(token),
                        None,
                        None,
                    )
                    .await;
                }
                4 => {
                    self.call(
                        "offers",
                        "GET",
                        format!("{order}/api/v2/client/point-offers"),
                        Some(token),
                        None,
                        None,
                    )
                    .await;
                }
                5 | 6 => self.point_order(token, friend, &key).await,
                7 | 8 => self.card_order(token, round.is_multiple_of(2), &key).await,
                9 => self.gift_code(token).await,
                10 => self.double_tap(token, &key).await,
                11 => self.capture_after_decline(token, &key).await,
                12 => self.duplicate_and_reordered_events(token, &key).await,
                13 => self.silent_card_order(token, &key).await,
                // Half of the lost pay answers are late-lost ones: each holds its client for
                // the point service's wait (10 s), so they stay a small share of the load.
                14 if (round / 17).is_multiple_of(2) => self.lost_card_order(token, &key).await,
                14 => self.late_lost_card_order(token, &key).await,
                15 => self.unknown_type_event(token, &key).await,
                _ => self.rush().await,
            }
        }
    }

    /// Retries with the same Idempotency-Key until the order is settled, as the app does.
    pub(crate) async fn point_order(&self, token: &'static str, friend: i64, key: &str) {
        let body =
            json!({"point_offer_id": OFFER, "to_client_id": friend, "payment_type": "point"});
        for _ in 0..20 {
            let order = self.order_base().await;
            let answer = self
                .call(
                    "point order",
                    "POST",
                    format!("{order}/api/v2/client/point-orders"),
                    Some(token),
                    Some(key),
                    Some(&body),
                )
                .await;
            if let Some((200, created)) = answer {
                let id = created["correlation_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let mut observed = self.observed.lock().unwrap();
                if created["status"] == "successful" {
                    observed.successful.push((token, id));
                } else {
                    observed
                        .unexpected
                        .push(format!("point order answered 200 but {created}"));
                }
                return;
            }
            if matches!(answer, Some((status, _)) if (400..500).contains(&status)) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    pub(crate) async fn card_order(&self, token: &'static str, approve: bool, key: &str) {
        let Some(created) = self.checkout(token, key).await else {
            return;
        };
        let id = created["correlation_id"].as_str().unwrap().to_owned();
        let card = if approve { "card_soak" } else { "decline-soak" };
        let Some(started) = self.pay("pay card", token, &id, card).await else {
            return;
        };
        // A `decline` card has no page: the sandbox declines it by webhook on its own. The
        // Approve button's 502 means the point service did not take the event; the payment
        // is captured all the same (the sandbox's status never waits on the webhook, as at a
        // real gateway), and the payment sync credits the order once its attempt is
        // PAYMENT_SYNC_AFTER_SECONDS old.
        if let Some(page) = started["redirect_url"].as_str()
            && self.press("3ds approve", page, "approve").await
        {
            self.observed.lock().unwrap().approved.push((token, id));
        }
    }

    /// A code of its own each time; a pending credit is retried by the same client.
    pub(crate) async fn gift_code(&self, token: &'static str) {
        let n = self.next_code.fetch_add(1, Ordering::Relaxed) as usize;
        if n >= GIFT_CODES {
            return;
        }
        let code = format!("SOAK-{n:05}");
        if self.redeem("gift code", token, &code).await {
            self.observed.lock().unwrap().redeemed.push(code);
        }
    }

    /// Redeems `code` as the app does, retrying a 5xx or a 429 (a credit still pending, a
    /// service down); true when it answered 200.
    pub(crate) async fn redeem(&self, action: &str, token: &'static str, code: &str) -> bool {
        for _ in 0..20 {
            let order = self.order_base().await;
            let answer = self
                .call(
                    action,
                    "POST",
                    format!("{order}/api/v2/client/gift-card-code"),
                    Some(token),
                    None,
                    Some(&json!({"code": code})),
                )
                .await;
            match answer {
                Some((200, _)) => return true,
                Some((status, _)) if (400..500).contains(&status) && status != 429 => return false,
                _ => tokio::time::sleep(Duration::from_millis(500)).await,
            }
        }
        false
    }

    /// A checkout order for a friend (Sara), or `None` when it could not be made.
    pub(crate) async fn checkout(&self, token: &'static str, key: &str) -> Option<Value> {
        let body =
            json!({"point_offer_id": OFFER, "to_client_id": 1001, "payment_type": "checkout"});
        let order = self.order_base().await;
        match self
            .call(
                "card order",
                "POST",
                format!("{order}/api/v2/client/point-orders"),
                Some(token),
                Some(key),
                Some(&body),
            )
            .await
        {
            Some((200, created)) => Some(created),
            _ => None,
        }
    }

    /// A card pay of `id` with `card`: the payment service's answer, when it was a 200.
    pub(crate) async fn pay(
        &self,
        action: &str,
        token: &'static str,
        id: &str,
        card: &str,
    ) -> Option<Value> {
        let order = self.order_base().await;
        match self
            .call(
                action,
                "POST",
                format!("{order}/api/v2/client/point-orders/{id}/pay/card"),
                Some(token),
                None,
                Some(&json!({"id": card, "cvv": "123"})),
            )
            .await?
        {
            (200, started) => Some(started),
            _ => None,
        }
    }

    /// A checkout order paid twice by card (a double tap), the older payment waiting on its
    /// 3-D Secure page, the newer one paid with `newer_card`; `None` when a step did not
    /// answer 200.
    pub(crate) async fn tapped_twice(
        &self,
        action: &str,
        token: &'static str,
        key: &str,
        newer_card: &str,
    ) -> Option<Tapped> {
        let created = self.checkout(token, key).await?;
        let id = created["correlation_id"].as_str()?.to_owned();
        let mut payments = Vec::with_capacity(2);
        for card in ["card_soak", newer_card] {
            let started = self.pay(action, token, &id, card).await?;
            payments.push(Payment {
                id: started["id"].as_str()?.to_owned(),
                page: started["redirect_url"].as_str()?.to_owned(),
            });
        }
        let newer = payments.pop()?;
        let older = payments.pop()?;
        Some(Tapped {
            created,
            id,
            older,
            newer,
        })
    }

    /// Presses a 3-D Secure button; true when the point service took the event.
    pub(crate) async fn press(&self, action: &str, page: &str, button: &str) -> bool {
        self.press_status(action, page, button).await == 200
    }

    /// Presses a 3-D Secure button again while the point service does not take its event
    /// (502: refused or unreachable), as a gateway retries a webhook, for up to 30 s and
    /// whether or not the load is stopping: a settled payment's event must not be dropped by
    /// the soak itself. True when it was taken.
    pub(crate) async fn press_until_taken(&self, action: &str, page: &str, button: &str) -> bool {
        for _ in 0..60 {
            match self.press_status(action, page, button).await {
                200 => return true,
                0 | 500.. => tokio::time::sleep(Duration::from_millis(500)).await,
                _ => return false,
            }
        }
        false
    }

    /// Presses a 3-D Secure button; its status (0: the sandbox could not be reached).
    async fn press_status(&self, action: &str, page: &str, button: &str) -> u16 {
        let pressed = self.http.post(format!("{page}/{button}")).send().await;
        let status = pressed.map(|r| r.status().as_u16()).unwrap_or(0);
        if self.strict && (status == 0 || status >= 500) {
            self.observed
                .lock()
                .unwrap()
                .unexpected
                .push(format!("{action} {page}/{button}: {status}"));
        }
        self.observed
            .lock()
            .unwrap()
            .count(action, status.to_string());
        status
    }

    /// A double tap: two card pays on one order; the older payment is declined, then the
    /// newer approved. The order is paid by the newer one, once.
    pub(crate) async fn double_tap(&self, token: &'static str, key: &str) {
        let Some(Tapped {
            id, older, newer, ..
        }) = self
            .tapped_twice("double tap pay", token, key, "card_soak")
            .await
        else {
            return;
        };
        // Whether or not the older decline got through, the newer capture pays the order.
        self.press("double tap decline older", &older.page, "decline")
            .await;
        if self
            .press("double tap approve newer", &newer.page, "approve")
            .await
        {
            let mut observed = self.observed.lock().unwrap();
            observed.approved.push((token, id.clone()));
            observed.credited_once.push((token, id));
        }
    }

    /// Two card pays; the newer payment is declined (the order fails), then the older one is
    /// captured: money taken that can no longer be turned into points, so it must be listed.
    pub(crate) async fn capture_after_decline(&self, token: &'static str, key: &str) {
        let Some(Tapped {
            id, older, newer, ..
        }) = self
            .tapped_twice("late capture pay", token, key, "card_soak")
            .await
        else {
            return;
        };
        self.observed
            .lock()
            .unwrap()
            .late_capture_orders
            .push(id.clone());
        if !self
            .press("late capture decline newer", &newer.page, "decline")
            .await
        {
            return;
        }
        // The older payment is captured when the button is pressed, whatever the point
        // service answers; its order is no longer open, so no payment sync looks at it: only
        // its webhook can list it for refund. Pressed again until taken, as the gateway
        // would deliver the webhook again.
        let taken = self
            .press_until_taken("late capture approve older", &older.page, "approve")
            .await;
        let mut observed = self.observed.lock().unwrap();
        if taken {
            observed.unapplied.push((token, id, older.id));
        } else {
            observed.undelivered.push(older.id);
        }
    }

    /// Signs and sends one webhook event straight to the point service; its status and body
    /// (`None` when it could not be reached), counted under `action`.
    pub(crate) async fn send_event(&self, action: &str, event: &Value) -> Option<(u16, Value)> {
        let body = event.to_string();
        let signature = testkit::tokens::webhook_signature(
            e2e::dev("PAYMENT_WEBHOOK_SECRET"),
            testkit::tokens::now(),
            &body,
        );
        let points = self.points_base().await;
        let sent = self
            .http
            .post(format!("{points}/webhooks/v1/payments"))
            .header("content-type", "application/json")
            .header("x-signature", signature)
            .body(body)
            .send()
            .await;
        let answer = match sent {
            Ok(response) => {
                let status = response.status().as_u16();
                let text = response.text().await.unwrap_or_default();
                Some((
                    status,
                    serde_json::from_str(&text).unwrap_or(Value::String(text)),
                ))
            }
            Err(_) => None,
        };
        let status = answer.as_ref().map(|(s, _)| *s);
        if self.strict && status.is_none_or(|s| s >= 500) {
            self.observed
                .lock()
                .unwrap()
                .unexpected
                .push(format!("{action} {}: {status:?}", event["id"]));
        }
        self.observed.lock().unwrap().count(
            action,
            status.map_or("unreachable".to_owned(), |s| s.to_string()),
        );
        answer
    }

    /// Sends `event` until the point service answers it with no 5xx (it may be down for a
    /// while): that answer, and whether an earlier delivery went unanswered (it may have been
    /// applied all the same, so that this one is a `duplicate_event`); `None` when no such
    /// answer came before the tries ran out or the load stopped.
    pub(crate) async fn deliver(&self, action: &str, event: &Value) -> Option<(u16, Value, bool)> {
        let mut unanswered = false;
        for _ in 0..40 {
            if self.stop.load(Ordering::Relaxed) {
                return None;
            }
            match self.send_event(action, event).await {
                Some((status, answer)) if status < 500 => {
                    return Some((status, answer, unanswered));
                }
                _ => {
                    unanswered = true;
                    tokio::time::sleep(Duration::from_millis(250)).await
                }
            }
        }
        None
    }

    /// What a real gateway does on a bad day: the newer payment's capture twice under one
    /// event id and once more under another, then the older payment's decline after it.
    /// The order is credited once and nothing is listed (no payment was taken twice). The
    /// newer payment is a `silent` card's, captured at the sandbox with no webhook of its
    /// own, so that the events the soak sends in the gateway's place name a real capture
    /// (the settlement check finds every credit's capture); were they all lost, the payment
    /// sync would credit the order.
    pub(crate) async fn duplicate_and_reordered_events(&self, token: &'static str, key: &str) {
        let Some(Tapped {
            created,
            id,
            older,
            newer,
        }) = self
            .tapped_twice("events pay", token, key, SILENT_CARD)
            .await
        else {
            return;
        };
        let amount_minor = minor_units(&created["money_amount"]);
        let n = self.next_event.fetch_add(1, Ordering::Relaxed);
        let event = |event_id: String, kind: &str, payment: &str| {
            json!({"id": event_id, "type": kind, "data": {
                "reference": id, "payment_id": payment, "provider": "soak",
                "amount_minor": amount_minor, "currency": "SAR"}})
        };
        let capture = event(
            format!("soak-evt-{n}-capture"),
            "payment_captured",
            &newer.id,
        );
        if !matches!(
            self.deliver("webhook event", &capture).await,
            Some((200, ..))
        ) {
            return;
        }
        self.deliver("webhook event", &capture).await;
        self.deliver(
            "webhook event",
            &event(
                format!("soak-evt-{n}-capture-again"),
                "payment_captured",
                &newer.id,
            ),
        )
        .await;
        self.deliver(
            "webhook event",
            &event(
                format!("soak-evt-{n}-decline"),
                "payment_declined",
                &older.id,
            ),
        )
        .await;
        let mut observed = self.observed.lock().unwrap();
        observed.approved.push((token, id.clone()));
        observed.credited_once.push((token, id));
    }

    /// A card order paid with a `silent` card: captured at once, its webhook never sent (a
    /// webhook lost for good). The pay answers 200 as usual; the payment sync reads the
    /// payment back once the attempt is PAYMENT_SYNC_AFTER_SECONDS old and credits it.
    pub(crate) async fn silent_card_order(&self, token: &'static str, key: &str) {
        let Some((created, payment)) = self.silent_payment("silent pay", token, key).await else {
            return;
        };
        let id = created["correlation_id"].as_str().unwrap().to_owned();
        self.observed.lock().unwrap().silent.push((id, payment));
    }

    /// A checkout order paid with a `silent` card: the order and the payment's id, when the
    /// pay answered 200.
    async fn silent_payment(
        &self,
        action: &str,
        token: &'static str,
        key: &str,
    ) -> Option<(Value, String)> {
        let created = self.checkout(token, key).await?;
        let id = created["correlation_id"].as_str()?.to_owned();
        let started = self.pay(action, token, &id, SILENT_CARD).await?;
        Some((created, started["id"].as_str()?.to_owned()))
    }

    /// A card order paid with a `lost` card: captured at once with no webhook, and the
    /// payment service's answer lost on the way back (502), so the pay route answers 500
    /// `INTERNAL_ERROR`, this call's expected answer. The payment sync finds the payment by
    /// the order's reference and credits it.
    pub(crate) async fn lost_card_order(&self, token: &'static str, key: &str) {
        let Some(created) = self.checkout(token, key).await else {
            return;
        };
        let id = created["correlation_id"].as_str().unwrap().to_owned();
        let order = self.order_base().await;
        let answer = self
            .call_expecting(
                "lost pay",
                "POST",
                format!("{order}/api/v2/client/point-orders/{id}/pay/card"),
                Some(token),
                None,
                Some(&json!({"id": LOST_CARD, "cvv": "123"})),
                Expect::AnswerLost,
            )
            .await;
        let mut observed = self.observed.lock().unwrap();
        match answer {
            Some((500, body)) if body["error"]["code"] == "INTERNAL_ERROR" => {
                observed.lost.push(id);
            }
            // Another 5xx is a kill's (the call judged it), and a 401 the auth service's
            // outage while PostgreSQL is down (the spec: an outage looks like a bad token;
            // the rolling mode fails on it); nothing reached is nothing said.
            Some((status, _)) if status >= 500 || status == 401 => {}
            None => {}
            Some((status, body)) => observed.wrong.push(format!(
                "the pay of {id} with a lost card answered {status} {body}, not 500 INTERNAL_ERROR"
            )),
        }
    }

    /// A card order paid with a late-lost card (every other one declined): the sandbox holds
    /// the call past the point service's wait (its pay route answers 500 `INTERNAL_ERROR`,
    /// this call's expected answer, and records the attempt lost) and makes the payment,
    /// with no webhook, only after the payment sync's first read of the order by reference,
    /// which so finds nothing. Finding nothing is not final: the sync must read again and
    /// apply it.
    pub(crate) async fn late_lost_card_order(&self, token: &'static str, key: &str) {
        let declined = self.next_late.fetch_add(1, Ordering::Relaxed) % 2 == 1;
        let Some(created) = self.checkout(token, key).await else {
            return;
        };
        let id = created["correlation_id"].as_str().unwrap().to_owned();
        let order = self.order_base().await;
        let card = late_card(declined, self.late_hold);
        let sent = Instant::now();
        let answer = self
            .call_expecting(
                "late-lost pay",
                "POST",
                format!("{order}/api/v2/client/point-orders/{id}/pay/card"),
                Some(token),
                None,
                Some(&json!({"id": card, "cvv": "123"})),
                Expect::AnswerLost,
            )
            .await;
        let mut observed = self.observed.lock().unwrap();
        let answered = match answer {
            Some((500, body)) if body["error"]["code"] == "INTERNAL_ERROR" => "500".to_owned(),
            // Another 5xx is a kill's (the call judged it), and a 401 the auth service's
            // outage; the call may have reached the sandbox all the same, and the checks
            // find out.
            Some((status, _)) if status >= 500 || status == 401 => status.to_string(),
            None => "unreachable".to_owned(),
            Some((status, body)) => {
                observed.wrong.push(format!(
                    "the pay of {id} with the late-lost card {card} answered {status} {body}, \
                     not 500 INTERNAL_ERROR"
                ));
                return;
            }
        };
        observed.late_lost.push(LateLost {
            id,
            declined,
            answered,
            took: sent.elapsed(),
        });
    }

    /// A `silent` payment, then a correctly signed event of a type the point service does
    /// not know (`payment.captured`, as a gateway's new API version might send) naming the
    /// order and the payment: answered 200 `unknown_type`, recorded, and the order synced at
    /// once (at the sync's next interval, not PAYMENT_SYNC_AFTER_SECONDS later).
    pub(crate) async fn unknown_type_event(&self, token: &'static str, key: &str) {
        let Some((created, payment)) = self.silent_payment("unknown-type pay", token, key).await
        else {
            return;
        };
        let id = created["correlation_id"].as_str().unwrap().to_owned();
        let n = self.next_event.fetch_add(1, Ordering::Relaxed);
        let event = json!({"id": format!("soak-evt-{n}-unknown-type"), "type": "payment.captured",
            "data": {"reference": id, "payment_id": payment, "provider": "soak",
                     "amount_minor": minor_units(&created["money_amount"]), "currency": "SAR"}});
        let Some((status, answer, unanswered)) = self.deliver("unknown-type event", &event).await
        else {
            return;
        };
        let mut observed = self.observed.lock().unwrap();
        // An earlier delivery that went unanswered may have been recorded: this one is then
        // its duplicate.
        if status == 200
            && answer["received"] == true
            && (answer["outcome"] == "unknown_type"
                || (unanswered && answer["outcome"] == "duplicate_event"))
        {
            observed.unknown_type.push((id, payment));
        } else {
            observed.wrong.push(format!(
                "the unknown-type event {} answered {status} {answer}, not 200 unknown_type",
                event["id"]
            ));
        }
    }

    /// One new code redeemed by every client at the same moment; each retries a 5xx (a
    /// credit still pending) as the app does. At most one of them may ever get a 200.
    pub(crate) async fn rush(&self) {
        let n = self.next_rush.fetch_add(1, Ordering::Relaxed) as usize;
        if n >= RUSH_CODES {
            return;
        }
        let code = format!("RUSH-{n:04}");
        let tries = CLIENTS.map(|(_, token)| self.redeem("rush code", token, &code));
        let wins = futures_util::future::join_all(tries)
            .await
            .into_iter()
            .filter(|won| *won)
            .count() as u64;
        self.observed.lock().unwrap().rush.insert(code, wins);
    }

    /// Restarts one replica every `period`, in turn (each service's replicas, then the next
    /// service), as a rollout does; returns each restart and how long its process took from
    /// SIGTERM to exit.
    pub(crate) async fn rolling(
        &self,
        period: Duration,
        replicas: usize,
    ) -> Vec<(String, Duration)> {
        let System::Replicated { stack, .. } = &self.system else {
            unreachable!("rolling restarts need replicas")
        };
        let mut done = Vec::new();
        let mut turn = 0;
        loop {
            tokio::time::sleep(period).await;
            if self.stop.load(Ordering::Relaxed) {
                return done;
            }
            let service = SERVICES[(turn / replicas) % SERVICES.len()];
            let replica = turn % replicas;
            turn += 1;
            let drained = stack.lock().await.restart(service, replica, PRE_STOP).await;
            eprintln!(
                "soak: restarted {service} r{replica} (exited {} ms after SIGTERM)",
                drained.as_millis()
            );
            done.push((format!("{service} r{replica}"), drained));
        }
    }

    /// Kills and restarts one part every `period`, in turn: the point service, the order
    /// service, PostgreSQL.
    pub(crate) async fn chaos(
        &self,
        cluster: &LocalCluster,
        nats: &tokio::sync::Mutex<testkit::nats::NatsServer>,
        period: Duration,
    ) -> BTreeMap<&'static str, u64> {
        let System::One(stack) = &self.system else {
            unreachable!("the chaos mode runs one process per service")
        };
        let mut done = BTreeMap::new();
        let mut turn = 0;
        loop {
            tokio::time::sleep(period).await;
            if self.stop.load(Ordering::Relaxed) {
                return done;
            }
            let victim = ["point-service", "order-service", "postgresql", "nats"][turn % 4];
            turn += 1;
            match victim {
                "point-service" => {
                    stack.read().await.points.crash();
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    stack.write().await.start_points_again().await;
                }
                "order-service" => {
                    stack.read().await.order.crash();
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    stack.write().await.start_order_again().await;
                }
                "nats" => {
                    nats.lock().await.stop();
                    tokio::time::sleep(Duration::from_secs(3)).await;
                    nats.lock().await.restart();
                }
                _ => {
                    cluster.kill();
                    tokio::time::sleep(Duration::from_secs(3)).await;
                    cluster.up();
                }
            }
            *done.entry(victim).or_default() += 1;
            eprintln!("soak: killed and restarted {victim}");
        }
    }
}

/// Rolling mode: every second, each replica's open pool connections (`/metrics`) and each
/// database's connections (`pg_stat_activity`); keeps the peaks in `soak.peaks`.
pub(crate) async fn sample_connections(
    soak: Arc<Soak>,
    replicas: Vec<(String, String)>,
    admin: String,
) {
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct PerDatabase {
        #[diesel(sql_type = diesel::sql_types::Text)]
        datname: String,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = connect(&admin).await;
    loop {
        let mut seen = Vec::new();
        for (name, base) in &replicas {
            let Ok(response) = soak.http.get(format!("{base}/metrics")).send().await else {
                continue;
            };
            let text = response.text().await.unwrap_or_default();
            let open = text
                .lines()
                .find(|l| l.starts_with("db_pool_connections{state=\"open\"}"))
                .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok());
            if let Some(open) = open {
                seen.push((name.clone(), open as u64));
            }
        }
        if let Ok(rows) = diesel::sql_query(
            "SELECT datname, count(*) AS n FROM pg_stat_activity \
             WHERE datname IN ('auth', 'points', 'catalog') GROUP BY datname",
        )
        .load::<PerDatabase>(&mut conn)
        .await
        {
            seen.extend(
                rows.into_iter()
                    .map(|r| (format!("database {}", r.datname), r.n as u64)),
            );
        }
        {
            let mut peaks = soak.peaks.lock().unwrap();
            for (name, n) in seen {
                let peak = peaks.entry(name).or_default();
                *peak = (*peak).max(n);
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// An order's `money_amount` ("15.00") in halalas, as the payment service sends it.
fn minor_units(money_amount: &Value) -> i64 {
    let money: domain::Money = money_amount.as_str().unwrap().parse().unwrap();
    money.minor_units().unwrap()
}
