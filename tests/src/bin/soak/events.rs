//! The events under the soak (docs/decisions.md, "Events"): both services publish to a NATS
//! server of the soak's own, which the chaos kills and restarts with the rest. Afterwards,
//! once both outboxes are drained: every ledger entry, order outcome, capture listed for
//! refund and credited redemption of the run has exactly one event id in the stream; every
//! event of the stream is for a change that committed (its outbox row, and its entry, order,
//! capture or redemption, exist); each event id is in the stream once; and per client and
//! source the events are in the stream in the order of their outbox ids, which follow commit
//! order. Returns the failures and the events counted by type.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use e2e::stack::Databases;
use serde_json::Value;
use testkit::nats::NatsServer;

/// How long the publishers may take to drain what the run left after the load stops.
const DRAIN: Duration = Duration::from_secs(180);

/// The rows of `query` on `url`, as JSON objects.
async fn rows(url: &str, query: &str) -> Vec<Value> {
    #[derive(QueryableByName)]
    struct Rows {
        #[diesel(sql_type = Text)]
        rows: String,
    }
    let mut conn = AsyncPgConnection::establish(url).await.unwrap();
    let found: Rows = diesel::sql_query(format!(
        "SELECT COALESCE(json_agg(t), '[]')::text AS rows FROM ({query}) t"
    ))
    .get_result(&mut conn)
    .await
    .unwrap();
    serde_json::from_str(&found.rows).unwrap()
}

async fn unpublished(url: &str) -> i64 {
    rows(
        url,
        "SELECT count(*) AS n FROM event_outbox WHERE published_at IS NULL",
    )
    .await[0]["n"]
        .as_i64()
        .unwrap()
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub(crate) async fn verify(
    databases: &Databases,
    nats: &NatsServer,
) -> (Vec<String>, BTreeMap<String, usize>) {
    let mut failures = Vec::new();
    let started = Instant::now();
    for url in [&databases.points, &databases.catalog] {
        while unpublished(url).await > 0 {
            if started.elapsed() > DRAIN {
                failures.push(format!(
                    "events: {} still unpublished {} s after the load",
                    unpublished(url).await,
                    DRAIN.as_secs()
                ));
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    let stream = nats.events().await;

    // The outboxes, by event id: (source, outbox id, client).
    let mut outbox: HashMap<String, (&str, i64, Option<i64>)> = HashMap::new();
    for (source, url) in [
        ("/loyalty/point-service", &databases.points),
        ("/loyalty/order-service", &databases.catalog),
    ] {
        for row in rows(
            url,
            "SELECT event_id::text AS event, id, client_id FROM event_outbox",
        )
        .await
        {
            outbox.insert(
                text(&row["event"]),
                (
                    source,
                    row["id"].as_i64().unwrap(),
                    row["client_id"].as_i64(),
                ),
            );
        }
    }

    // Each event id once in the stream, each with its outbox row, and the stream holds them all.
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for message in &stream {
        *by_id.entry(message.message_id.as_str()).or_default() += 1;
        *counts.entry(message.subject.clone()).or_default() += 1;
        if message.event["id"] != Value::String(message.message_id.clone()) {
            failures.push(format!(
                "events: message {} carries id {}",
                message.message_id, message.event["id"]
            ));
        }
        match outbox.get(&message.message_id) {
            None => failures.push(format!("events: {} is in no outbox", message.event)),
            Some((source, _, client)) => {
                if message.event["source"] != *source
                    || message.event.get("subject").map(text) != client.map(|c| c.to_string())
                {
                    failures.push(format!(
                        "events: {} does not match its outbox row",
                        message.event
                    ));
                }
            }
        }
    }
    for (id, n) in &by_id {
        if *n != 1 {
            failures.push(format!("events: {id} is in the stream {n} times"));
        }
    }
    let missing = outbox
        .keys()
        .filter(|id| !by_id.contains_key(id.as_str()))
        .count();
    if missing > 0 {
        failures.push(format!(
            "events: {missing} outbox rows are not in the stream"
        ));
    }

    // Per client and source, in the order of the outbox ids (commit order).
    let mut last: HashMap<(&str, i64), i64> = HashMap::new();
    let mut out_of_order = 0;
    for message in &stream {
        if let Some((source, id, Some(client))) = outbox.get(&message.message_id) {
            let previous = last.insert((source, *client), *id);
            if previous.is_some_and(|p| p > *id) {
                out_of_order += 1;
            }
        }
    }
    if out_of_order > 0 {
        failures.push(format!(
            "events: {out_of_order} events came before an earlier one of their client"
        ));
    }

    // Each change of the run has exactly one event, and each event is for a change.
    let of_type = |prefix: &str, key: &str| -> BTreeMap<String, usize> {
        let mut found = BTreeMap::new();
        for message in &stream {
            if message.subject.starts_with(prefix) {
                *found.entry(text(&message.event["data"][key])).or_default() += 1;
            }
        }
        found
    };
    let changes = [
        (
            "ledger entries",
            "loyalty.points.",
            "entryId",
            &databases.points,
            "SELECT id::text AS key FROM point_entries",
        ),
        (
            "order outcomes",
            "loyalty.order.",
            "orderId",
            &databases.points,
            "SELECT correlation_id::text AS key FROM point_orders \
          WHERE order_no IS NOT NULL AND status IN ('successful', 'payment_failed')",
        ),
        (
            "captures listed for refund",
            "loyalty.capture.unapplied",
            "paymentEventId",
            &databases.points,
            "SELECT event_id AS key FROM unapplied_captures",
        ),
        (
            "credited redemptions",
            "loyalty.giftcode.redeemed",
            "redemptionId",
            &databases.catalog,
            "SELECT id::text AS key FROM gift_card_redemptions WHERE status = 'credited'",
        ),
    ];
    for (what, prefix, key, url, query) in changes {
        let mut events = of_type(prefix, key);
        // The expiring-soon notices have no entry of their own.
        events.remove("null");
        let committed: Vec<String> = rows(url, query)
            .await
            .iter()
            .map(|r| text(&r["key"]))
            .collect();
        let without = committed
            .iter()
            .filter(|k| !events.contains_key(*k))
            .count();
        let twice = committed
            .iter()
            .filter(|k| events.get(*k).is_some_and(|n| *n > 1))
            .count();
        let extra = events.len() - (committed.len() - without);
        if without + twice + extra > 0 {
            failures.push(format!(
                "events: of {} {what}, {without} have no event and {twice} more than one; \
                 {extra} events are for none",
                committed.len()
            ));
        }
    }
    (failures, counts)
}
