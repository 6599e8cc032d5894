//! The publisher: every replica of a service runs one inside `serve` when `NATS_URL` is set;
//! the one that holds its database's `event-publisher` lease (`worker_leases`) sends the
//! outbox's unpublished rows in
//! id order to JetStream, one at a time, each acknowledged before the next is sent, and marks
//! the sent ones published after each small batch. So a client's events reach the stream in
//! commit order (the outbox's ids are in commit order per client), and a failure stops the
//! round at the first row not acknowledged: that row and those after it are sent again next
//! round, never a later one before it.
//!
//! At least once: a row sent whose acknowledgement was lost, or whose batch was not marked
//! before a crash, is sent again with the same message id, which JetStream drops inside its
//! duplicate window ([`super::DUPLICATE_WINDOW`], well above the lease, so a takeover after a
//! crash falls inside it); a consumer dedupes by `id` beyond it. A batch stops taking rows once
//! it has run for a third of the lease, and a publisher that fails drops its connection, gives
//! the lease back and sits out a lease, so a replica cut off from NATS (or, during a rollout,
//! one that does not know a new type) hands over to one that is not.
//! Nothing in the request path waits for NATS: a change only writes its row, and while NATS is
//! down the rows wait in the outbox.

use std::time::{Duration, Instant};

use async_nats::jetstream::{self, context::Context, message::PublishMessage, stream};
use diesel::sql_types::{Array, BigInt};
use diesel_async::RunQueryDsl;
use tokio::sync::watch;

use super::cloud_event::{Pending, UnknownType};
use super::{DUPLICATE_WINDOW, EventSettings, STREAM, SUBJECT_PREFIX};
use db::leases;

/// The lease's name in `worker_leases`.
const LEASE_NAME: &str = "event-publisher";

/// How long a connection attempt to NATS, and JetStream's acknowledgement of one event, may
/// take.
const NATS_WAIT: Duration = Duration::from_secs(5);

/// How long the lease holds without a renewal: several batches at their slowest, and far
/// below the duplicate window.
const LEASE: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error("the outbox could not be read or marked: {0}")]
    Database(String),
    #[error("NATS is unreachable: {0}")]
    Connect(String),
    #[error("JetStream did not take an event: {0}")]
    Publish(String),
    #[error(transparent)]
    UnknownType(#[from] UnknownType),
}

impl From<diesel::result::Error> for PublishError {
    fn from(e: diesel::result::Error) -> Self {
        PublishError::Database(e.to_string())
    }
}

impl From<db::PoolError> for PublishError {
    fn from(e: db::PoolError) -> Self {
        PublishError::Database(e.to_string())
    }
}

/// What the publisher needs.
#[derive(Clone)]
pub struct Publisher {
    pub pool: db::Pool,
    pub settings: EventSettings,
    /// This replica's name in the lease.
    pub holder: String,
    /// The CloudEvents `source`: `/loyalty/point-service`.
    pub source: &'static str,
}

/// Connects to NATS at `url` and makes sure the stream exists (subjects `loyalty.>`, the
/// duplicate window of [`DUPLICATE_WINDOW`]).
pub async fn connect(url: &str, replicas: usize) -> Result<Context, PublishError> {
    let client = async_nats::ConnectOptions::new()
        .connection_timeout(NATS_WAIT)
        .connect(url)
        .await
        .map_err(|e| PublishError::Connect(e.to_string()))?;
    let context = jetstream::ContextBuilder::new()
        .timeout(NATS_WAIT)
        .build(client);
    // Created when missing, and set back to these subjects and this window when it differs.
    context
        .create_or_update_stream(stream::Config {
            name: STREAM.to_owned(),
            subjects: vec![format!("{SUBJECT_PREFIX}>")],
            duplicate_window: DUPLICATE_WINDOW,
            num_replicas: replicas,
            ..Default::default()
        })
        .await
        .map_err(|e| PublishError::Connect(e.to_string()))?;
    Ok(context)
}

/// Runs a round every `EVENTS_POLL_MS` until `stop` turns true; without `NATS_URL`, says that
/// the events wait in the outbox and returns.
pub async fn run(publisher: Publisher, mut stop: watch::Receiver<bool>) {
    let Some(url) = publisher.settings.nats_url.clone() else {
        tracing::warn!("NATS_URL is not set: the events wait in the outbox");
        return;
    };
    tracing::info!(
        poll_ms = publisher.settings.poll.as_millis() as u64,
        "events publisher started"
    );
    let mut context: Option<Context> = None;
    loop {
        if server::pause_or_stop(&mut stop, publisher.settings.poll).await {
            break;
        }
        if context.is_none() {
            match connect(&url, publisher.settings.stream_replicas).await {
                Ok(connected) => context = Some(connected),
                Err(e) => {
                    tracing::warn!(error.message = %e, "events wait in the outbox");
                    continue;
                }
            }
        }
        if let Some(connected) = &context
            && let Err(e) = drain(&publisher, connected, &stop).await
        {
            // The lease is given back and this replica sits out a lease, so another one
            // (which may reach NATS, or know a type this one does not during a rollout) takes
            // over; then it connects afresh (the stream made again if it was lost). The rows
            // not acknowledged go first either way.
            tracing::warn!(error.message = %e, "events publishing stopped; the next round goes on");
            context = None;
            give_back_lease(&publisher).await;
            if server::pause_or_stop(&mut stop, publisher.settings.after_failure).await {
                break;
            }
        }
    }
    give_back_lease(&publisher).await;
    tracing::info!("events publisher stopped");
}

/// Gives the lease back, so that another replica takes over at its next round; best effort
/// (a lease not given back runs out).
async fn give_back_lease(publisher: &Publisher) {
    if let Ok(mut conn) = publisher.pool.get().await {
        let _ = leases::release(&mut conn, LEASE_NAME, &publisher.holder).await;
    }
}

/// While this replica holds the lease, publishes the unpublished rows in id order, a batch
/// at a time, until none is left or `stop` turns true. Returns how many it published.
pub async fn drain(
    publisher: &Publisher,
    context: &Context,
    stop: &watch::Receiver<bool>,
) -> Result<usize, PublishError> {
    let mut published = 0;
    while !*stop.borrow() {
        let rows: Vec<Pending> = {
            let mut conn = publisher.pool.get().await?;
            if !leases::lead(&mut conn, LEASE_NAME, &publisher.holder, LEASE).await? {
                break;
            }
            diesel::sql_query(
                "SELECT id, event_id, type AS event_type, client_id, data, occurred_at \
                 FROM event_outbox WHERE published_at IS NULL ORDER BY id LIMIT $1",
            )
            .bind::<BigInt, _>(publisher.settings.batch)
            .load(&mut conn)
            .await?
        };
        let (sent, failed) = send(context, &rows, publisher.source, stop).await;
        if !sent.is_empty() {
            let mut conn = publisher.pool.get().await?;
            diesel::sql_query(
                "UPDATE event_outbox SET published_at = now() WHERE id = ANY($1) \
                 AND published_at IS NULL",
            )
            .bind::<Array<BigInt>, _>(&sent)
            .execute(&mut conn)
            .await?;
            published += sent.len();
        }
        if let Some(e) = failed {
            return Err(e);
        }
        if rows.len() < publisher.settings.batch as usize {
            break;
        }
    }
    Ok(published)
}

/// Sends `rows` in order, each acknowledged before the next, until one fails, `stop` turns
/// true, or a third of the lease has passed (the rest go with the next batch, after the lease
/// is renewed). Returns the ids acknowledged and, when one was not, why.
async fn send(
    context: &Context,
    rows: &[Pending],
    source: &str,
    stop: &watch::Receiver<bool>,
) -> (Vec<i64>, Option<PublishError>) {
    let started = Instant::now();
    let mut sent = Vec::with_capacity(rows.len());
    for row in rows {
        if *stop.borrow() || started.elapsed() > LEASE / 3 {
            break;
        }
        match send_one(context, row, source).await {
            Ok(()) => sent.push(row.id),
            Err(e) => return (sent, Some(e)),
        }
    }
    (sent, None)
}

async fn send_one(context: &Context, row: &Pending, source: &str) -> Result<(), PublishError> {
    let event_type = row.event_type()?;
    let body = serde_json::to_vec(&row.cloud_event(event_type, source))
        .map_err(|e| PublishError::Publish(e.to_string()))?;
    let message = PublishMessage::build()
        .payload(body.into())
        .message_id(row.event_id.to_string());
    let ack = context
        .send_publish(event_type.subject(), message)
        .await
        .map_err(|e| PublishError::Publish(e.to_string()))?;
    ack.await
        .map_err(|e| PublishError::Publish(e.to_string()))?;
    Ok(())
}
