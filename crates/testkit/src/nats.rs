//! A NATS server with JetStream of the test's own: `nats-server` (Debian's package;
//! `scripts/test.sh` installs it when missing) on a port the server picks, its store in a
//! directory of its own, stopped and removed when dropped. [`NatsServer::stop`] and
//! [`NatsServer::restart`] play an outage: the same port and store come back.
//! [`NatsServer::events`] reads the events stream back; [`record_samples`] keeps what a test
//! received for the check of the events document.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

pub struct NatsServer {
    child: Option<Child>,
    port: u16,
    store: PathBuf,
}

impl NatsServer {
    /// Starts a server on a free loopback port and waits until it is ready.
    pub fn start() -> Self {
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let store = std::env::temp_dir().join(format!(
            "loyalty-nats-{}-{}",
            std::process::id(),
            STARTED.fetch_add(1, Ordering::Relaxed)
        ));
        let (child, port) = spawn(&store, -1);
        Self {
            child: Some(child),
            port,
            store,
        }
    }

    /// `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Stops the server (SIGKILL: nothing is flushed on the way out but what it had synced).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port with the same store.
    pub fn restart(&mut self) {
        self.stop();
        let (child, _) = spawn(&self.store, i32::from(self.port));
        self.child = Some(child);
    }
}

/// One message of the events stream.
#[derive(Debug, Clone)]
pub struct StreamMessage {
    pub subject: String,
    /// Its `Nats-Msg-Id` header: the event's id.
    pub message_id: String,
    /// The CloudEvent.
    pub event: Value,
}

impl NatsServer {
    /// Every message of the events stream (`outbox::STREAM`), in its order (read by an
    /// ordered consumer of its own, in batches: a soak's stream holds tens of thousands).
    pub async fn events(&self) -> Vec<StreamMessage> {
        use futures_util::StreamExt;
        let client = async_nats::connect(self.url()).await.expect("NATS answers");
        let context = async_nats::jetstream::new(client);
        let mut stream = context
            .get_stream(outbox::STREAM)
            .await
            .expect("the events stream exists");
        let count = stream
            .info()
            .await
            .expect("the stream's state")
            .state
            .messages;
        let consumer = stream
            .create_consumer(async_nats::jetstream::consumer::pull::OrderedConfig::default())
            .await
            .expect("an ordered consumer");
        let mut received = consumer
            .messages()
            .await
            .expect("the messages")
            .take(count as usize);
        let mut messages = Vec::with_capacity(count as usize);
        while let Some(message) = received.next().await {
            let message = message.expect("a message of the stream");
            let message_id = message
                .headers
                .as_ref()
                .and_then(|h| h.get("Nats-Msg-Id"))
                .map(|v| v.as_str().to_owned())
                .unwrap_or_default();
            messages.push(StreamMessage {
                subject: message.subject.to_string(),
                message_id,
                event: serde_json::from_slice(&message.payload).expect("a JSON event"),
            });
        }
        messages
    }
}

/// Records the events a test received for `scripts/check-events-document.sh` (`make test`
/// runs it after the tests), which checks each against its message of `docs/api/events.yaml`:
/// one JSON file per event in `<EVENT_SAMPLES_DIR>/<name>/` (default
/// `<target_tmpdir>/event-samples/<name>/`; an integration test passes
/// `env!("CARGO_TARGET_TMPDIR")`), replacing what that name recorded before.
pub fn record_samples(target_tmpdir: &str, name: &str, messages: &[StreamMessage]) {
    let root = std::env::var_os("EVENT_SAMPLES_DIR").map_or_else(
        || Path::new(target_tmpdir).join("event-samples"),
        PathBuf::from,
    );
    let dir = root.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the samples directory");
    for (n, message) in messages.iter().enumerate() {
        let file = dir.join(format!("{n:02}-{}.json", message.subject));
        std::fs::write(file, message.event.to_string()).expect("a sample written");
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.store);
    }
}

/// The server binary: on the PATH, or where Debian puts it.
fn binary() -> &'static str {
    if Command::new("nats-server")
        .arg("--version")
        .output()
        .is_ok()
    {
        "nats-server"
    } else {
        "/usr/sbin/nats-server"
    }
}

/// Starts `nats-server` on `port` (-1: one it picks) and reads its log until it is ready;
/// returns the process and the port it listens on.
fn spawn(store: &std::path::Path, port: i32) -> (Child, u16) {
    let mut child = Command::new(binary())
        .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
        .arg(store)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nats-server runs (apt-get install nats-server)");
    let log = BufReader::new(child.stderr.take().expect("stderr is piped"));
    // The log is read to its end on a thread of its own: a pipe nobody reads would fill and
    // stop the server.
    let (ready, started) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut listening = None;
        let mut ready = Some(ready);
        for line in log.lines().map_while(Result::ok) {
            if let Some((_, port)) = line.split_once("Listening for client connections on ") {
                listening = port.rsplit(':').next().and_then(|p| p.trim().parse().ok());
            }
            if line.contains("Server is ready")
                && let Some(ready) = ready.take()
            {
                let _ = ready.send(listening);
            }
        }
    });
    let port = started
        .recv()
        .ok()
        .flatten()
        .expect("nats-server started and said where it listens");
    (child, port)
}
