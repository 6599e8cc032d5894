//! The points events (`point_service::events`): every ledger entry writes its event in its
//! own transaction, and the publisher sends them to a real NATS JetStream as CloudEvents, in
//! commit order per client, at least once, each message id once inside the duplicate window.

use std::time::Duration;

use async_nats::jetstream;
use outbox::publisher::{self, Publisher};
use outbox::{EventSettings, EventType, STREAM};
use point_service::ledger::{self, Entry, Kind};
use serde_json::{Value, json};
use testkit::nats::{NatsServer, StreamMessage};
use tokio::sync::watch;

use crate::helpers::*;

/// The publisher a test drives, over a pool of its own on the app's database.
pub(crate) fn publisher(app: &TestApp, holder: &str) -> Publisher {
    let database = testkit::config::database(app.database.url(), 2);
    Publisher {
        pool: db::build_pool(&database.pool_settings()).unwrap(),
        settings: EventSettings {
            nats_url: None,
            poll: Duration::from_millis(50),
            batch: 2,
            after_failure: Duration::from_millis(50),
            stream_replicas: 1,
        },
        holder: holder.to_owned(),
        source: point_service::startup::EVENTS_SOURCE,
    }
}

/// One `drain` of `publisher` that nothing asks to stop.
pub(crate) async fn drain(
    publisher: &Publisher,
    context: &jetstream::context::Context,
) -> Result<usize, publisher::PublishError> {
    publisher::drain(publisher, context, &watch::channel(false).1).await
}

/// Every message of the stream, in its order, as (subject, `Nats-Msg-Id`, JSON).
async fn stream_messages(nats: &NatsServer) -> Vec<(String, String, Value)> {
    nats.events()
        .await
        .into_iter()
        .map(|m| (m.subject, m.message_id, m.event))
        .collect()
}

/// The rows of `query` on the app's database, as JSON objects.
pub(crate) async fn rows(app: &TestApp, query: &str) -> Vec<Value> {
    serde_json::from_str(&app.database.rows_json(query).await).unwrap()
}

/// Whether the outbox empties within ten seconds (a running publisher drains it).
async fn drained(app: &TestApp) -> bool {
    for _ in 0..200 {
        if unpublished(app).await == 0 {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

pub(crate) async fn unpublished(app: &TestApp) -> i64 {
    app.count("SELECT count(*) AS n FROM event_outbox WHERE published_at IS NULL")
        .await
}

#[tokio::test]
async fn every_ledger_entry_commits_with_one_event_and_a_refused_order_with_none() {
    let app = spawn_app().await;
    let (status, _) = app.order(SARA, &order_body(OMAR, "point")).await;
    assert_eq!(status, 200);
    // More than Sara holds: refused, nothing written.
    let mut too_much = order_body(OMAR, "point");
    too_much["point_offer_id"] = json!("64b7f0c2a1b2c3d4e5f60719");
    app.sql("UPDATE point_offers SET purchased_point_amount = 100000 WHERE id = '64b7f0c2a1b2c3d4e5f60719'")
        .await;
    let (status, _) = app.order(SARA, &too_much).await;
    assert_ne!(status, 200);
    // The seed's three entries and the order's two, each with exactly one event.
    assert_eq!(
        app.count("SELECT count(*) AS n FROM point_entries").await,
        5
    );
    // And the order's outcome.
    assert_eq!(app.count("SELECT count(*) AS n FROM event_outbox").await, 6);
    assert_eq!(
        app.count(
            "SELECT count(*) AS n FROM point_entries e \
             WHERE (SELECT count(*) FROM event_outbox o WHERE (o.data->>'entryId')::bigint = e.id) <> 1"
        )
        .await,
        0
    );
    // The order's two: Sara's charge and Omar's credit, with the points as decimal text.
    let rows = rows(
        &app,
        "SELECT type, client_id, data FROM event_outbox \
         WHERE data ? 'entryId' AND data->>'orderId' IS NOT NULL ORDER BY id",
    )
    .await;
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[0]["type"].clone(), rows[0]["client_id"].clone()),
        (json!("points.spent"), json!(SARA))
    );
    assert_eq!(rows[0]["data"]["points"], json!("-120"));
    assert_eq!(rows[0]["data"]["kind"], json!("gift_sent"));
    assert_eq!(
        (rows[1]["type"].clone(), rows[1]["client_id"].clone()),
        (json!("points.credited"), json!(OMAR))
    );
    assert_eq!(rows[1]["data"]["points"], json!("100"));
}

#[tokio::test]
async fn the_publisher_sends_cloud_events_in_commit_order_and_marks_them_published() {
    let app = spawn_app().await;
    let nats = NatsServer::start();
    let (status, _) = app.order(SARA, &order_body(OMAR, "point")).await;
    assert_eq!(status, 200);
    // Sara's points expire: the ledger a year older, then the expiry job.
    assert_eq!(app.expire_a_year_later().await.clients_expired, 1);
    // Omar earns today: his points expire in 365 days, so a 365-day notice is due.
    let mut conn = app.database.connect().await;
    let mut omar = ledger::lock_account(&mut conn, OMAR).await.unwrap();
    let earn = Entry {
        kind: Kind::Earn,
        points: bigdecimal::BigDecimal::from(5),
        order: None,
        reference: Some("test:omar-earns"),
        at: None,
    };
    ledger::append(&mut conn, &mut omar, earn).await.unwrap();
    let written = point_service::expiry::notices::write(&mut conn, &[365])
        .await
        .unwrap();
    assert_eq!(written.by_notice, [(365, 1)]);
    let publisher = publisher(&app, "replica-a");
    let context = publisher::connect(&nats.url(), 1).await.unwrap();
    // Batches of two: nine events take five round trips.
    assert_eq!(drain(&publisher, &context).await.unwrap(), 9);
    assert_eq!(unpublished(&app).await, 0);

    let outbox = rows(
        &app,
        "SELECT event_id::text AS event, type, client_id, data, occurred_at FROM event_outbox ORDER BY id",
    )
    .await;
    let messages = stream_messages(&nats).await;
    assert_eq!(messages.len(), outbox.len());
    for ((subject, message_id, event), row) in messages.iter().zip(&outbox) {
        let event_type = EventType::parse(row["type"].as_str().unwrap()).unwrap();
        assert_eq!(subject, &event_type.subject());
        assert_eq!(message_id, row["event"].as_str().unwrap());
        assert_eq!(
            keys(event),
            [
                "specversion",
                "id",
                "source",
                "type",
                "subject",
                "time",
                "datacontenttype",
                "data"
            ]
        );
        assert_eq!(event["specversion"], "1.0");
        assert_eq!(event["id"], row["event"]);
        assert_eq!(event["source"], "/loyalty/point-service");
        assert_eq!(
            event["type"],
            json!(format!("loyalty.{}", row["type"].as_str().unwrap()))
        );
        assert_eq!(event["subject"], json!(row["client_id"].to_string()));
        assert_eq!(event["datacontenttype"], "application/json");
        assert_eq!(event["data"], row["data"]);
        let time = chrono::DateTime::parse_from_rfc3339(event["time"].as_str().unwrap()).unwrap();
        let occurred =
            chrono::DateTime::parse_from_rfc3339(row["occurred_at"].as_str().unwrap()).unwrap();
        assert_eq!(time, occurred);
        let text = event.to_string();
        assert!(
            !text.contains("+966") && !text.contains('@'),
            "no phone or e-mail: {text}"
        );
    }
    let types: Vec<&str> = messages
        .iter()
        .map(|(subject, _, _)| subject.as_str())
        .collect();
    assert_eq!(
        types,
        [
            "loyalty.points.credited",
            "loyalty.points.credited",
            "loyalty.points.spent",
            "loyalty.order.successful",
            "loyalty.points.spent",
            "loyalty.points.credited",
            "loyalty.points.expired",
            "loyalty.points.credited",
            "loyalty.points.expiring"
        ]
    );
    let received: Vec<StreamMessage> = nats.events().await;
    testkit::nats::record_samples(
        env!("CARGO_TARGET_TMPDIR"),
        "point-service-ledger",
        &received,
    );
}

#[tokio::test]
async fn while_nats_is_down_events_wait_and_a_republished_event_is_dropped_as_a_duplicate() {
    let app = spawn_app().await;
    let mut nats = NatsServer::start();
    let publisher = publisher(&app, "replica-a");
    let context = publisher::connect(&nats.url(), 1).await.unwrap();
    assert_eq!(drain(&publisher, &context).await.unwrap(), 3);

    nats.stop();
    let (status, _) = app.order(SARA, &order_body(OMAR, "point")).await;
    assert_eq!(status, 200, "the request path does not wait for NATS");
    assert!(drain(&publisher, &context).await.is_err());
    assert_eq!(unpublished(&app).await, 3, "the order's three events wait");

    nats.restart();
    // The client reconnects on its own; the rows go once it has.
    let mut published = 0;
    for _ in 0..100 {
        published += drain(&publisher, &context).await.unwrap_or(0);
        if unpublished(&app).await == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!((published, unpublished(&app).await), (3, 0));

    // A row sent again (an acknowledgement lost, a leader that stalled) keeps its message id:
    // JetStream drops it, and the stream holds each event once.
    app.sql("UPDATE event_outbox SET published_at = NULL").await;
    assert_eq!(drain(&publisher, &context).await.unwrap(), 6);
    let messages = stream_messages(&nats).await;
    let ids: std::collections::BTreeSet<&String> = messages.iter().map(|(_, id, _)| id).collect();
    assert_eq!((messages.len(), ids.len()), (6, 6));
    // Per client in commit order: Sara's seeded entries, then her charge.
    let sara: Vec<&Value> = messages
        .iter()
        .map(|(_, _, event)| event)
        .filter(|event| event["subject"] == json!(SARA.to_string()))
        .collect();
    let entry_ids: Vec<i64> = sara
        .iter()
        .filter_map(|e| e["data"]["entryId"].as_i64())
        .collect();
    let mut sorted = entry_ids.clone();
    sorted.sort_unstable();
    assert_eq!(entry_ids, sorted);
    assert_eq!(sara.last().unwrap()["type"], "loyalty.points.spent");
}

#[tokio::test]
async fn only_the_lease_holder_publishes() {
    let app = spawn_app().await;
    let nats = NatsServer::start();
    let leader = publisher(&app, "replica-a");
    let other = publisher(&app, "replica-b");
    let context = publisher::connect(&nats.url(), 1).await.unwrap();
    assert_eq!(drain(&leader, &context).await.unwrap(), 3);
    let (status, _) = app.order(SARA, &order_body(OMAR, "point")).await;
    assert_eq!(status, 200);
    assert_eq!(drain(&other, &context).await.unwrap(), 0);
    assert_eq!(unpublished(&app).await, 3);
    assert_eq!(drain(&leader, &context).await.unwrap(), 3);
}

#[tokio::test]
async fn the_outbox_check_is_the_point_services_event_types() {
    let app = spawn_app().await;
    let mut known: Vec<&str> = EventType::ALL
        .iter()
        .map(|t| t.as_str())
        .filter(|t| !["giftcode.redeemed"].contains(t))
        .collect();
    known.sort_unstable();
    assert_eq!(app.database.check_values("event_outbox.type").await, known);
}

#[tokio::test]
async fn the_running_publisher_makes_a_lost_stream_again_and_goes_on() {
    let app = spawn_app().await;
    let nats = NatsServer::start();
    let (stop_tx, stop) = watch::channel(false);
    let mut running = publisher(&app, "replica-a");
    running.settings.nats_url = Some(nats.url());
    let worker = tokio::spawn(publisher::run(running, stop));
    // The seed's events first.
    assert!(drained(&app).await, "the seed's events were published");
    // Someone deletes the stream; the next events fail once, then the publisher connects
    // again, makes the stream and sends them.
    let context = jetstream::new(async_nats::connect(nats.url()).await.unwrap());
    context.delete_stream(STREAM).await.unwrap();
    let (status, _) = app.order(SARA, &order_body(OMAR, "point")).await;
    assert_eq!(status, 200);
    assert!(
        drained(&app).await,
        "the order's events were published again"
    );
    let messages = stream_messages(&nats).await;
    assert_eq!(
        messages
            .iter()
            .map(|(subject, _, _)| subject.as_str())
            .collect::<Vec<_>>(),
        [
            "loyalty.order.successful",
            "loyalty.points.spent",
            "loyalty.points.credited"
        ]
    );
    stop_tx.send(true).unwrap();
    worker.await.unwrap();
    assert_eq!(
        app.count("SELECT count(*) AS n FROM worker_leases WHERE name = 'event-publisher'")
            .await,
        0,
        "the lease is given back on stop"
    );
}
