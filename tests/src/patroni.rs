//! A Patroni cluster on local ports, as operators run PostgreSQL in production: one etcd
//! (the consensus store that holds the leader lock), and members that each run Patroni,
//! which runs PostgreSQL, elects the leader through etcd, fences a leader that lost its lock
//! and keeps one replica synchronous (`synchronous_mode_strict`: with no replica left, writes
//! stop rather than go on unreplicated, as docs/scaling.md decides). Debian's `patroni` and
//! `etcd-server`, as they come (`make failover` installs them when missing).
//!
//! Timings are a drill's: the leader lock lives 10 s (`ttl`), Patroni's loop runs every
//! second; production keeps Patroni's defaults (30 s, 10 s), and a failover then takes
//! about three times as long (docs/scaling.md). There is no watchdog device here: the
//! cluster runs a stand-in for one (`watchdog`), without which a leader whose Patroni hangs is
//! never fenced.

mod watchdog;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::free_port;
use crate::pg_server::{as_server_user, give_to_server_user, pg_bindir};
pub use watchdog::TIMEOUT as WATCHDOG_TIMEOUT;
use watchdog::{Watchdog, Watched};

/// The leader lock's time to live, in seconds (a dead leader is replaced after it).
pub const TTL_SECONDS: u64 = 10;

pub struct Member {
    pub name: String,
    /// PostgreSQL's port.
    pub port: u16,
    /// Patroni's REST API's port.
    api: u16,
    config: PathBuf,
    data: PathBuf,
    patroni: Option<Child>,
}

pub struct Cluster {
    dir: PathBuf,
    etcd: Child,
    pub members: Vec<Member>,
    http: reqwest::Client,
    watchdog: Watchdog,
}

impl Cluster {
    /// etcd and `n` members; returns once one leads and the others stream from it.
    pub async fn start(n: usize) -> Cluster {
        let dir =
            std::env::temp_dir().join(format!("loyalty-patroni-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let (client, peer) = (free_port(), free_port());
        let etcd = Command::new("etcd")
            .args(["--name", "drill", "--data-dir"])
            .arg(dir.join("etcd"))
            .arg(format!("--listen-client-urls=http://127.0.0.1:{client}"))
            .arg(format!("--advertise-client-urls=http://127.0.0.1:{client}"))
            .arg(format!("--listen-peer-urls=http://127.0.0.1:{peer}"))
            .arg(format!(
                "--initial-advertise-peer-urls=http://127.0.0.1:{peer}"
            ))
            .arg(format!("--initial-cluster=drill=http://127.0.0.1:{peer}"))
            .args(["--log-level", "warn"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("etcd runs (Debian's etcd-server)");
        let bin = pg_bindir();
        let members: Vec<Member> = (1..=n)
            .map(|i| {
                let name = format!("pg{i}");
                let home = dir.join(&name);
                std::fs::create_dir_all(&home).unwrap();
                let (port, api) = (free_port(), free_port());
                let config = home.join("patroni.yml");
                std::fs::write(
                    &config,
                    member_config(&name, &home, port, api, client, &bin),
                )
                .unwrap();
                Member {
                    name,
                    port,
                    api,
                    config,
                    data: home.join("data"),
                    patroni: None,
                }
            })
            .collect();
        give_to_server_user(&dir);
        let watchdog = Watchdog::start(
            members
                .iter()
                .map(|m: &Member| Watched {
                    api: m.api,
                    config: m.config.clone(),
                    data: m.data.clone(),
                })
                .collect(),
        );
        let mut cluster = Cluster {
            dir,
            etcd,
            members,
            http: reqwest::Client::new(),
            watchdog,
        };
        for i in 0..n {
            cluster.start_member(i);
            if i == 0 {
                // The first one bootstraps the cluster; the others clone it.
                cluster.wait_for_leader(None, Duration::from_secs(60)).await;
            }
        }
        let deadline = Instant::now() + Duration::from_secs(120);
        while cluster.roles().await.iter().filter(|m| m.running).count() < n {
            assert!(
                Instant::now() < deadline,
                "the Patroni members are not all running after 120 s"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        cluster
    }

    /// A URL naming every member, for a client that must reach whichever leads.
    pub fn url(&self, database: &str) -> String {
        let hosts: Vec<String> = self
            .members
            .iter()
            .map(|m| format!("127.0.0.1:{}", m.port))
            .collect();
        format!(
            "postgres://postgres@{}/{database}?target_session_attrs=read-write",
            hosts.join(",")
        )
    }

    /// The URL of one member's `database`.
    pub fn member_url(&self, member: usize, database: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/{database}",
            self.members[member].port
        )
    }

    /// (Re)starts a member's Patroni, which starts its PostgreSQL.
    pub fn start_member(&mut self, member: usize) {
        let m = &mut self.members[member];
        let log = std::fs::File::create(m.config.with_file_name("patroni.log")).unwrap();
        let mut command = Command::new("patroni");
        command
            .arg(&m.config)
            .env("HOME", m.config.parent().unwrap())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        m.patroni = Some(
            as_server_user(&mut command)
                .spawn()
                .expect("patroni runs (Debian's patroni)"),
        );
    }

    /// Every member's view as Patroni's REST API gives it (from any member that answers).
    pub async fn roles(&self) -> Vec<Role> {
        for member in &self.members {
            let Ok(response) = self
                .http
                .get(format!("http://127.0.0.1:{}/cluster", member.api))
                .timeout(Duration::from_secs(2))
                .send()
                .await
            else {
                continue;
            };
            let Ok(cluster) = response.json::<Value>().await else {
                continue;
            };
            return cluster["members"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| {
                    let name = m["name"].as_str()?;
                    Some(Role {
                        member: self.members.iter().position(|x| x.name == name)?,
                        role: m["role"].as_str().unwrap_or_default().to_owned(),
                        running: matches!(m["state"].as_str(), Some("running" | "streaming")),
                    })
                })
                .collect();
        }
        Vec::new()
    }

    /// The member that leads now.
    pub async fn leader(&self) -> Option<usize> {
        self.roles()
            .await
            .into_iter()
            .find(|r| r.role == "leader")
            .map(|r| r.member)
    }

    /// The member the leader commits synchronously to.
    pub async fn sync_standby(&self) -> Option<usize> {
        self.roles()
            .await
            .into_iter()
            .find(|r| r.role == "sync_standby")
            .map(|r| r.member)
    }

    /// Waits until a member other than `not` leads and takes writes; returns it.
    pub async fn wait_for_leader(&self, not: Option<usize>, within: Duration) -> usize {
        let deadline = Instant::now() + within;
        loop {
            if let Some(leader) = self.leader().await.filter(|l| Some(*l) != not)
                && self.writable(leader).await
            {
                return leader;
            }
            assert!(Instant::now() < deadline, "no new leader within {within:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The member is a standby streaming from the leader (in recovery, its WAL receiver
    /// streaming): a member that came back really rejoined.
    pub async fn streaming(&self, member: usize) -> bool {
        self.holds(
            member,
            "SELECT pg_is_in_recovery() AND EXISTS \
             (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming')",
        )
        .await
    }

    async fn writable(&self, member: usize) -> bool {
        self.holds(member, "SELECT NOT pg_is_in_recovery()").await
    }

    /// Whether `query` (one boolean) holds on the member; false when it cannot be asked.
    async fn holds(&self, member: usize, query: &str) -> bool {
        let Ok((client, connection)) =
            tokio_postgres::connect(&self.member_url(member, "postgres"), tokio_postgres::NoTls)
                .await
        else {
            return false;
        };
        tokio::spawn(connection);
        client
            .query_one(query, &[])
            .await
            .is_ok_and(|row| row.get::<_, bool>(0))
    }

    fn signal(&self, member: usize, signal: &str) {
        let m = &self.members[member];
        let pids = processes(&m.config, &m.data);
        // A stale pid (the watchdog stand-in killed the member already) is no failure.
        let _ = Command::new("kill")
            .arg(signal)
            .args(&pids)
            .stderr(Stdio::null())
            .status();
    }

    /// The member's host lost: Patroni and PostgreSQL killed at once (SIGKILL).
    pub fn kill(&mut self, member: usize) {
        self.signal(member, "-KILL");
        if let Some(mut patroni) = self.members[member].patroni.take() {
            let _ = patroni.wait();
        }
    }

    /// The member's host hung: every process stopped (SIGSTOP); its sockets stay open.
    pub fn freeze(&self, member: usize) {
        self.signal(member, "-STOP");
    }

    pub fn thaw(&self, member: usize) {
        self.signal(member, "-CONT");
    }

    /// When the watchdog stand-in reset `member` (killed its processes, as the device resets
    /// the host of a leader whose Patroni stopped feeding it) at or after `since`.
    pub fn reset_by_watchdog(&self, member: usize, since: Instant) -> Option<Instant> {
        self.watchdog.reset_since(member, since)
    }

    /// A planned switchover from `leader` to `candidate`, as an operator asks for it.
    pub fn switchover(&self, leader: usize, candidate: usize) {
        let mut command = Command::new("patronictl");
        command
            .arg("-c")
            .arg(&self.members[leader].config)
            .args(["switchover", "--leader", &self.members[leader].name])
            .args(["--candidate", &self.members[candidate].name, "--force"]);
        let output = as_server_user(&mut command)
            .output()
            .expect("patronictl runs");
        assert!(
            output.status.success(),
            "patronictl switchover: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// A member's processes: its Patroni's (found by its configuration file's path, which no
/// other member shares), then its PostgreSQL's (the postmaster and every process it started).
fn processes(config: &std::path::Path, data: &std::path::Path) -> Vec<String> {
    let mut pids = pgrep(&["-f", &config.display().to_string()]);
    if let Ok(pid_file) = std::fs::read_to_string(data.join("postmaster.pid")) {
        let postmaster = pid_file
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned();
        let children = pgrep(&["-P", &postmaster]);
        pids.push(postmaster);
        pids.extend(children);
    }
    pids
}

/// Kills a member's processes at once (SIGKILL); false when its Patroni was not running
/// (nothing to reset: a member the drill killed, its postmaster's pid file stale).
fn kill_processes(config: &std::path::Path, data: &std::path::Path) -> bool {
    if pgrep(&["-f", &config.display().to_string()]).is_empty() {
        return false;
    }
    let pids = processes(config, data);
    Command::new("kill")
        .arg("-KILL")
        .args(&pids)
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

fn pgrep(args: &[&str]) -> Vec<String> {
    Command::new("pgrep")
        .args(args)
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// One member in Patroni's view.
pub struct Role {
    pub member: usize,
    /// `leader`, `sync_standby` or `replica`.
    pub role: String,
    pub running: bool,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for member in 0..self.members.len() {
            self.signal(member, "-CONT");
            self.kill(member);
        }
        let _ = self.etcd.kill();
        let _ = self.etcd.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn member_config(
    name: &str,
    home: &std::path::Path,
    port: u16,
    api: u16,
    etcd: u16,
    bin: &str,
) -> String {
    let home = home.display();
    format!(
        "scope: loyalty
namespace: /loyalty-drill/
name: {name}
restapi:
  listen: 127.0.0.1:{api}
  connect_address: 127.0.0.1:{api}
etcd3:
  hosts: 127.0.0.1:{etcd}
bootstrap:
  dcs:
    ttl: {TTL_SECONDS}
    loop_wait: 1
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    synchronous_mode_strict: true
    postgresql:
      use_pg_rewind: true
      parameters:
        max_connections: 300
        wal_level: replica
        hot_standby: 'on'
        wal_log_hints: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
  initdb:
    - encoding: UTF8
    - no-locale
  pg_hba:
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
    - local all all trust
    - local replication all trust
postgresql:
  listen: 127.0.0.1:{port}
  connect_address: 127.0.0.1:{port}
  data_dir: {home}/data
  bin_dir: {bin}
  pgpass: {home}/pgpass
  authentication:
    replication:
      username: postgres
    superuser:
      username: postgres
    rewind:
      username: postgres
  parameters:
    unix_socket_directories: {home}
"
    )
}
