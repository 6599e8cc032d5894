//! Two replicas of every service behind a round-robin balancer each (HAProxy, as a
//! Kubernetes Service), over one set of databases: each rule that must hold across replicas
//! gets its steps sent to chosen replicas directly (step 1 to replica A, step 2 to replica
//! B), and through the balancer as the app sends them. One stack serves every rule.
//!
//! - an OTP code asked on one replica verifies on the other;
//! - wrong guesses spread over both replicas still kill the code after 5;
//! - the same Idempotency-Key on both point-service replicas makes one order;
//! - the same webhook event on both point-service replicas is applied once;
//! - one gift code redeemed through both order-service replicas at once has one 200;
//! - while the point service is unreachable, redemptions stay pending, and the retry
//!   workers of both order-service replicas credit each exactly once when it is back;
//! - limits (client lookups per caller, wrong gift codes per client) count across both.

use std::time::{Duration, Instant};

use e2e::money::{self, CLIENTS};
use e2e::replicated::{AUTH, ORDER, POINTS, ReplicatedStack, SERVICES};
use e2e::stack::Databases;
use e2e::{Service, demo_database};
use serde_json::Value;

const LOOKUPS_PER_HOUR: usize = 4;
const GIFT_CODE_TRIES_PER_HOUR: usize = 3;

#[tokio::test]
async fn every_cross_replica_rule_holds_with_two_replicas_behind_a_balancer() {
    let auth_db = demo_database(&["auth-service"], "auth").await;
    let points_db = demo_database(&["point-service"], "points").await;
    let catalog_db = demo_database(&["order-service", "operator-service"], "catalog").await;
    money::fund(points_db.url(), 100_000).await;
    money::add_gift_codes(catalog_db.url(), "XR", 10, "7.5").await;
    {
        use diesel_async::SimpleAsyncConnection;
        // Random codes, sent through the log provider, for the OTP rules.
        let mut auth = auth_db.connect().await;
        auth.batch_execute("UPDATE clients SET test_mode = false WHERE client_id IN (1002, 1003)")
            .await
            .unwrap();
    }
    let lookups = LOOKUPS_PER_HOUR.to_string();
    let tries = GIFT_CODE_TRIES_PER_HOUR.to_string();
    let stack = ReplicatedStack::start(
        &Databases {
            auth: auth_db.url().to_owned(),
            points: points_db.url().to_owned(),
            catalog: catalog_db.url().to_owned(),
        },
        2,
        &[("CLIENT_LOOKUPS_PER_CLIENT_PER_HOUR", &lookups)],
        &[
            ("GIFT_CODE_TRIES_PER_CLIENT_PER_HOUR", &tries),
            ("GIFT_CARD_RETRY_INTERVAL_MS", "100"),
            ("GIFT_CARD_RETRY_MAX_BACKOFF_SECONDS", "1"),
        ],
    )
    .await;

    let token = otp_code_asked_on_one_replica_verifies_on_the_other(&stack).await;
    wrong_guesses_over_both_replicas_kill_the_code_after_five(&stack).await;
    lookups_are_counted_across_both_replicas(&stack, &token).await;
    the_same_idempotency_key_on_both_replicas_makes_one_order(&stack, points_db.url()).await;
    the_same_webhook_event_on_both_replicas_is_applied_once(&stack, points_db.url()).await;
    one_gift_code_through_both_replicas_at_once_has_one_200(&stack).await;
    wrong_gift_codes_are_counted_across_both_replicas(&stack).await;
    both_retry_workers_credit_each_stuck_redemption_once(&stack, &points_db, &catalog_db).await;

    // The balancer spread the connections between replicas: every replica of the services
    // called that way served some (nothing calls the operator service).
    for stat in stack.balancer.stats().await {
        if [AUTH, POINTS, ORDER].contains(&stat.service.as_str()) {
            assert!(stat.connections > 0, "no connection reached {stat:?}");
        }
    }
}

/// Whether `line` is the log provider's line of a code sent to `phone`.
fn sends_code_to(line: &str, phone: &str) -> bool {
    line.contains("SMS (log provider") && line.contains(phone)
}

/// Asks `replica` for a new code for `phone` (reset-otp) and returns it, read from the
/// replica's log line of that code (log provider): the line after those written before the
/// request, waited for, never an older code's.
async fn new_code(stack: &ReplicatedStack, replica: &Service, phone: &str) -> String {
    let before = replica
        .log()
        .matching(|line| sends_code_to(line, phone))
        .len();
    let query = format!("contact_phone={}", phone.replace('+', "%2B"));
    let (status, body) = otp(stack, &replica.base, "reset-otp", &query).await;
    assert_eq!(status, 200, "{body}");
    let sent = replica
        .log()
        .wait_for_more(before, &format!("sending a code to {phone}"), |line| {
            sends_code_to(line, phone)
        })
        .await;
    assert_eq!(
        sent.len(),
        before + 1,
        "one reset-otp, one code sent: {sent:?}"
    );
    let text = sent[before]
        .split("Your verification code: ")
        .nth(1)
        .unwrap();
    text.chars().take_while(char::is_ascii_digit).collect()
}

async fn otp(stack: &ReplicatedStack, base: &str, route: &str, query: &str) -> (u16, Value) {
    let url = format!("{base}/api/v1/clients/{route}?{query}");
    stack.call("GET", &url, None, &[], None).await
}

/// Returns Omar's primary token.
async fn otp_code_asked_on_one_replica_verifies_on_the_other(stack: &ReplicatedStack) -> String {
    let [a, b] = stack.replicas(AUTH) else {
        unreachable!()
    };
    let phone = "contact_phone=%2B966500000002";
    let code = new_code(stack, a, "+966500000002").await;
    let (status, body) = otp(
        stack,
        &b.base,
        "verify-otp",
        &format!("{phone}&code={code}"),
    )
    .await;
    assert_eq!(status, 200, "a code from replica A verified on B: {body}");
    body["data"]["access_token"].as_str().unwrap().to_owned()
}

async fn wrong_guesses_over_both_replicas_kill_the_code_after_five(stack: &ReplicatedStack) {
    let [a, b] = stack.replicas(AUTH) else {
        unreachable!()
    };
    let phone = "contact_phone=%2B966500000003";
    let code = new_code(stack, b, "+966500000003").await;
    let wrong = if code == "0000" { "1111" } else { "0000" };
    for (i, replica) in [a, b, a, b, a].into_iter().enumerate() {
        let (status, body) = otp(
            stack,
            &replica.base,
            "verify-otp",
            &format!("{phone}&code={wrong}"),
        )
        .await;
        assert_eq!(
            status,
            400,
            "wrong guess {} on {}: {body}",
            i + 1,
            replica.base
        );
    }
    let (status, body) = otp(
        stack,
        &b.base,
        "verify-otp",
        &format!("{phone}&code={code}"),
    )
    .await;
    assert_eq!(
        status, 400,
        "after 5 wrong guesses over both replicas the code is dead: {body}"
    );
    // The next reset-otp sends a new code, which works.
    let fresh = new_code(stack, a, "+966500000003").await;
    let (status, body) = otp(
        stack,
        &b.base,
        "verify-otp",
        &format!("{phone}&code={fresh}"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

async fn lookups_are_counted_across_both_replicas(stack: &ReplicatedStack, token: &str) {
    let [a, b] = stack.replicas(AUTH) else {
        unreachable!()
    };
    let lookup = |base: &str| format!("{base}/api/v1/clients?contact_phone=%2B966500000001");
    for i in 0..LOOKUPS_PER_HOUR {
        let base = if i % 2 == 0 { &a.base } else { &b.base };
        let (status, body) = stack
            .call("GET", &lookup(base), Some(token), &[], None)
            .await;
        assert_eq!(status, 200, "lookup {} on {base}: {body}", i + 1);
    }
    for base in [&a.base, &b.base, &stack.url(AUTH)] {
        let (status, body) = stack
            .call("GET", &lookup(base), Some(token), &[], None)
            .await;
        assert_eq!(status, 429, "a lookup past the limit on {base}: {body}");
    }
}

async fn the_same_idempotency_key_on_both_replicas_makes_one_order(
    stack: &ReplicatedStack,
    points_db: &str,
) {
    let [a, b] = stack.replicas(POINTS) else {
        unreachable!()
    };
    let http = reqwest::Client::new();
    let (_, token) = CLIENTS[0];
    let key = "replicas-idempotency-1";
    let (status, first) = money::point_order(&http, &a.base, token, 1002, key).await;
    assert_eq!(status, 200, "{first}");
    let (status, second) = money::point_order(&http, &b.base, token, 1002, key).await;
    assert_eq!(
        (status, &second),
        (200, &first),
        "replica B answers A's order"
    );
    // A new key on both replicas at the same moment (both requests released together by
    // a barrier), several times over: the two inserts of the key race, one order is made and
    // both are answered it.
    let orders_of = |n: i64| async move {
        let made = money::count(
            points_db,
            "SELECT count(*) AS n FROM point_orders WHERE payer_id = 1001",
        )
        .await;
        made - n
    };
    let before = orders_of(0).await;
    for round in 0..5 {
        let key = format!("replicas-idempotency-race-{round}");
        let start = tokio::sync::Barrier::new(2);
        let (one, two) = tokio::join!(
            async {
                start.wait().await;
                money::point_order(&http, &a.base, token, 1002, &key).await
            },
            async {
                start.wait().await;
                money::point_order(&http, &b.base, token, 1002, &key).await
            }
        );
        assert_eq!(one.0, 200, "round {round}: {}", one.1);
        assert_eq!(
            one, two,
            "round {round}: both replicas answer the one order"
        );
        let id = one.1["correlation_id"].as_str().unwrap();
        assert_eq!(
            orders_of(before).await,
            round + 1,
            "round {round}: one order per key"
        );
        let spends = money::count(
            points_db,
            &format!(
                "SELECT count(*) AS n FROM point_entries WHERE order_correlation_id = '{id}' AND points < 0"
            ),
        )
        .await;
        assert_eq!(spends, 1, "round {round}: one charge for one key");
    }
    // The first key again, at once on every replica and through the balancer.
    let again = futures_util::future::join_all(
        [a.base.clone(), b.base.clone(), stack.url(ORDER)]
            .into_iter()
            .chain(stack.replicas(ORDER).iter().map(|s| s.base.clone()))
            .map(|base| {
                let http = &http;
                async move { money::point_order(http, &base, token, 1002, key).await }
            }),
    )
    .await;
    let bases = [a.base.clone(), b.base.clone(), stack.url(ORDER)]
        .into_iter()
        .chain(stack.replicas(ORDER).iter().map(|s| s.base.clone()));
    for (answer, base) in again.into_iter().zip(bases) {
        assert_eq!(answer, (200, first.clone()), "through {base}");
    }
    let id = first["correlation_id"].as_str().unwrap();
    let spends = money::count(
        points_db,
        &format!(
            "SELECT count(*) AS n FROM point_entries WHERE order_correlation_id = '{id}' AND points < 0"
        ),
    )
    .await;
    assert_eq!(spends, 1, "one charge for one key");
}

async fn the_same_webhook_event_on_both_replicas_is_applied_once(
    stack: &ReplicatedStack,
    points_db: &str,
) {
    let [a, b] = stack.replicas(POINTS) else {
        unreachable!()
    };
    let http = reqwest::Client::new();
    let (_, token) = CLIENTS[1];
    let (created, payment) = money::card_order(&http, &stack.url(ORDER), token).await;
    let event = money::event("replicas-evt-1", "payment_captured", &created, &payment);
    let (first, second) = tokio::join!(
        money::send_event(&http, &a.base, &event),
        money::send_event(&http, &b.base, &event)
    );
    assert_eq!((first.0, second.0), (200, 200), "{first:?} {second:?}");
    let (again, _) = money::send_event(&http, &stack.url(POINTS), &event).await;
    assert_eq!(again, 200);
    let id = created["correlation_id"].as_str().unwrap();
    let seen = money::order_status(&http, &stack.url(ORDER), token, id).await;
    assert_eq!(seen["status"], "successful", "{seen}");
    let credits = money::count(
        points_db,
        &format!("SELECT count(*) AS n FROM point_entries WHERE order_correlation_id = '{id}'"),
    )
    .await;
    assert_eq!(credits, 1, "one event id, one credit");
}

async fn one_gift_code_through_both_replicas_at_once_has_one_200(stack: &ReplicatedStack) {
    let [a, b] = stack.replicas(ORDER) else {
        unreachable!()
    };
    let http = reqwest::Client::new();
    // Two clients, then one client twice, each pair at once through both replicas.
    for (code, first, second) in [
        ("XR-0000", CLIENTS[2].1, CLIENTS[3].1),
        ("XR-0001", CLIENTS[4].1, CLIENTS[4].1),
    ] {
        let (one, other) = tokio::join!(
            money::redeem(&http, &a.base, first, code),
            money::redeem(&http, &b.base, second, code)
        );
        let mut statuses = [one.0, other.0];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409], "{code}: {one:?} {other:?}");
        for base in [&a.base, &b.base] {
            let (status, _) = money::redeem(&http, base, first, code).await;
            assert_eq!(status, 409, "{code} again on {base}");
        }
    }
}

async fn wrong_gift_codes_are_counted_across_both_replicas(stack: &ReplicatedStack) {
    let [a, b] = stack.replicas(ORDER) else {
        unreachable!()
    };
    let http = reqwest::Client::new();
    let (_, token) = CLIENTS[3];
    for i in 0..GIFT_CODE_TRIES_PER_HOUR {
        let base = if i % 2 == 0 { &a.base } else { &b.base };
        let (status, body) = money::redeem(&http, base, token, &format!("NOPE-{i}")).await;
        assert_eq!(status, 404, "wrong code {} on {base}: {body}", i + 1);
    }
    for base in [&a.base, &b.base] {
        let (status, body) = money::redeem(&http, base, token, "NOPE-LAST").await;
        assert_eq!(status, 429, "a wrong code past the limit on {base}: {body}");
    }
}

async fn both_retry_workers_credit_each_stuck_redemption_once(
    stack: &ReplicatedStack,
    points_db: &db::testing::TestDatabase,
    catalog_db: &db::testing::TestDatabase,
) {
    let order = stack.replicas(ORDER);
    let http = reqwest::Client::new();
    // The point service is unreachable (both replicas out of the balancer, their open
    // connections cut): each credit fails and its redemption stays pending.
    for replica in 0..2 {
        stack.balancer.cut_off(POINTS, replica).await;
    }
    let stuck: Vec<(&str, String)> = (2..8)
        .map(|n| (CLIENTS[n % 3].1, format!("XR-{n:04}")))
        .collect();
    for (i, (token, code)) in stuck.iter().enumerate() {
        let (status, body) = money::redeem(&http, &order[i % 2].base, token, code).await;
        assert_eq!(
            status, 502,
            "{code} while the point service is away: {body}"
        );
    }
    for replica in 0..2 {
        stack.balancer.set_state(POINTS, replica, "ready").await;
        stack.balancer.wait_for(POINTS, replica, "UP").await;
    }
    let started = Instant::now();
    while money::count(
        catalog_db.url(),
        "SELECT count(*) AS n FROM gift_card_redemptions WHERE status = 'pending'",
    )
    .await
        > 0
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the retry workers left redemptions pending"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Each stuck redemption was sent by one retry worker only: the lease keeps the other
    // replica's worker off a credit that is out (the point service's credit is idempotent by
    // reference, so the ledger alone could not tell two senders from one).
    let mut landed: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for replica in order {
        // Each line is written before its redemption is marked credited: all there once
        // the pipes are read up to now.
        for line in replica.log().written().await {
            if line.contains("gift-card credit landed") && line.contains("\"by\":\"retry\"") {
                let id = serde_json::from_str::<serde_json::Value>(&line).unwrap()["redemption.id"]
                    .to_string();
                *landed.entry(id).or_default() += 1;
            }
        }
    }
    for (token, code) in &stuck {
        let redemption = money::count(
            catalog_db.url(),
            &format!(
                "SELECT id AS n FROM gift_card_redemptions WHERE code = '{code}' AND status = 'credited'"
            ),
        )
        .await;
        // The credit's reference is the code's (docs/design.md): `gift-card:<code>`.
        let entries = money::count(
            points_db.url(),
            &format!(
                "SELECT count(*) AS n FROM point_entries WHERE reference = 'gift-card:{code}'"
            ),
        )
        .await;
        assert_eq!(entries, 1, "{code} credited once");
        assert_eq!(
            landed.get(&redemption.to_string()).copied(),
            Some(1),
            "{code} (redemption {redemption}) was not sent by exactly one retry worker: {landed:?}"
        );
        // The same client's retry is told it succeeded, once: the code's one 200.
        let (status, body) = money::redeem(&http, &order[0].base, token, code).await;
        assert_eq!(status, 200, "{code} retried by its client: {body}");
        let (status, body) = money::redeem(&http, &order[1].base, token, code).await;
        assert_eq!(
            status, 409,
            "{code} once more, on the other replica: {body}"
        );
    }
    for service in SERVICES {
        for replica in stack.replicas(service) {
            let written = replica.log().written().await;
            assert!(
                written.iter().all(|l| !l.contains("panicked")),
                "{service} panicked"
            );
        }
    }
}
