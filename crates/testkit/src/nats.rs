//! A NATS server with JetStream of the test's own: `nats-server` (Debian's package;
//! `scripts/test.sh` installs it when missing) on a port the server picks, its store in a
//! directory of its own, stopped and removed when dropped. [`NatsServer::stop`] and
//! [`NatsServer::restart`] play an outage: the same port and store come back.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

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
