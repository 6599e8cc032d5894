//! A stand-in for Patroni's watchdog, since this machine has no watchdog device.
//!
//! With `watchdog: {mode: required}` Patroni arms `/dev/watchdog` when its member becomes the
//! leader and feeds it on every run of its loop; a leader whose Patroni stops running its loop
//! (the host hung, or Patroni itself stuck, as the freeze drill found it after a SIGCONT,
//! inside a call to etcd) is reset by the device `ttl - safety_margin` seconds after its last
//! feed, before the leader lock expires and another member is promoted: two primaries never
//! run at once. Without it, a thawed old leader goes on as a primary beside the new one
//! (docs/scaling.md, "On Patroni").
//!
//! Here the drill does what the device does, from outside: the leader counts as fed while its
//! REST API answers `GET /liveness` with 200 and `GET /patroni` with a `dcs_last_seen` (its
//! loop's last contact with etcd) of the last few seconds; a leader not fed for [`TIMEOUT`]
//! (stopped, it answers nothing; stuck, its `dcs_last_seen` ages) has its processes killed
//! (SIGKILL), as the reset would. Only a member that led at its last answer is armed, as
//! Patroni arms the device only on the leader.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{TTL_SECONDS, kill_processes};

/// Patroni's default `safety_margin`: the device's timeout is `ttl` less it.
const SAFETY_MARGIN_SECONDS: u64 = 5;
pub const TIMEOUT: Duration = Duration::from_secs(TTL_SECONDS - SAFETY_MARGIN_SECONDS);

/// A member the stand-in reset.
#[derive(Clone, Copy, Debug)]
pub struct Reset {
    pub member: usize,
    pub at: Instant,
}

/// What the stand-in needs of a member: its REST API, and where to find its processes.
pub struct Watched {
    pub api: u16,
    pub config: std::path::PathBuf,
    pub data: std::path::PathBuf,
}

pub struct Watchdog {
    resets: Arc<Mutex<Vec<Reset>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Watchdog {
    pub fn start(members: Vec<Watched>) -> Watchdog {
        let resets = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn(watch(members, resets.clone()));
        Watchdog { resets, task }
    }

    /// When the stand-in last reset `member` at or after `since`.
    pub fn reset_since(&self, member: usize, since: Instant) -> Option<Instant> {
        self.resets
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.member == member && r.at >= since)
            .map(|r| r.at)
            .max()
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What one look at a member found.
enum Seen {
    /// It leads, and its loop ran lately.
    Fed,
    /// It answers and does not lead: the device is disarmed.
    Follows,
    /// No answer, or an answer saying its loop has not run lately.
    Silent,
}

/// How old Patroni's last contact with etcd (`dcs_last_seen`, which its loop renews every
/// `loop_wait`, 1 s here) may be for a look to count as a feed.
const FRESH: Duration = Duration::from_secs(3);

async fn look(http: &reqwest::Client, api: u16) -> Seen {
    let get = |path: &str| {
        http.get(format!("http://127.0.0.1:{api}/{path}"))
            .timeout(Duration::from_millis(500))
            .send()
    };
    // `/liveness` is 503 once the loop's next run is overdue by `ttl`; `/patroni` answers
    // from the last state even while the loop is stuck, so its `dcs_last_seen` decides.
    let live = matches!(get("liveness").await, Ok(r) if r.status().is_success());
    let state: Value = match get("patroni").await {
        Ok(answer) => answer.json().await.unwrap_or_default(),
        Err(_) => return Seen::Silent,
    };
    if !matches!(state["role"].as_str(), Some("primary" | "master")) {
        return if state.is_null() {
            Seen::Silent
        } else {
            Seen::Follows
        };
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    let fresh = state["dcs_last_seen"]
        .as_f64()
        .is_some_and(|seen| now - seen <= FRESH.as_secs_f64());
    if live && fresh {
        Seen::Fed
    } else {
        Seen::Silent
    }
}

async fn watch(members: Vec<Watched>, resets: Arc<Mutex<Vec<Reset>>>) {
    let http = reqwest::Client::new();
    // For each member, when it was last fed while it led: `Some` is armed.
    let mut fed: Vec<Option<Instant>> = vec![None; members.len()];
    loop {
        for (i, member) in members.iter().enumerate() {
            match look(&http, member.api).await {
                Seen::Fed => fed[i] = Some(Instant::now()),
                Seen::Follows => fed[i] = None,
                Seen::Silent => {
                    if let Some(last) = fed[i]
                        && last.elapsed() >= TIMEOUT
                    {
                        fed[i] = None;
                        // A member already gone (killed by the drill) has nothing to reset.
                        if kill_processes(&member.config, &member.data) {
                            resets.lock().unwrap().push(Reset {
                                member: i,
                                at: Instant::now(),
                            });
                        }
                    }
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
