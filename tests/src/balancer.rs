//! A real load balancer (Debian's HAProxy) in front of several replicas of each service,
//! playing a Kubernetes Service as kube-proxy makes it: TCP only (`mode tcp`: a client's
//! connection goes to one replica for its whole life, however many requests it carries, and
//! nothing is retried or sent elsewhere), round robin over the replicas that pass their readiness
//! check (`GET /readyz`, 4 s to answer, out after 2 failures in a row as the pods' probe
//! has it, checked every second and every 200 ms while a replica changes state), and a
//! runtime API to take one replica out of rotation before it is stopped, as the endpoint
//! removal that precedes SIGTERM does.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

use crate::free_port;
use crate::tools::{WorkDir, debian_binary, wait_for_port};

pub struct Balancer {
    /// Service name → the port its frontend listens on.
    frontends: BTreeMap<String, u16>,
    child: Child,
    dir: WorkDir,
}

/// One replica as the balancer sees it (a row of HAProxy's `show stat`).
#[derive(Debug, Clone)]
pub struct ReplicaStat {
    pub service: String,
    pub replica: usize,
    /// `UP`, `DOWN`, `DRAIN`, `MAINT`, ...
    pub status: String,
    /// Connections it has open now.
    pub current: u64,
    /// Connections it was given so far (in TCP mode the balancer sees connections, not
    /// requests).
    pub connections: u64,
}

impl Balancer {
    /// A frontend per service on a free port, round robin over `replicas` (service name →
    /// the replicas' ports). Replicas need not be up yet: each joins once `/readyz` answers.
    pub async fn start(replicas: &[(&str, Vec<u16>)]) -> Balancer {
        let binary = debian_binary("haproxy", "haproxy");
        let dir = WorkDir::new("haproxy");
        let mut config = format!(
            "global\n\
             \x20   maxconn 4096\n\
             \x20   stats socket {socket} mode 600 level admin\n\
             defaults\n\
             \x20   mode tcp\n\
             \x20   timeout connect 2s\n\
             \x20   timeout client 60s\n\
             \x20   timeout server 60s\n\
             \x20   retries 0\n",
            socket = dir.path("admin.sock").display()
        );
        let mut frontends = BTreeMap::new();
        for (service, ports) in replicas {
            let port = free_port();
            frontends.insert((*service).to_owned(), port);
            config.push_str(&format!(
                "frontend {service}\n\
                 \x20   bind 127.0.0.1:{port}\n\
                 \x20   default_backend {service}\n\
                 backend {service}\n\
                 \x20   balance roundrobin\n\
                 \x20   option httpchk GET /readyz\n\
                 \x20   timeout check 4s\n\
                 \x20   default-server inter 1s fastinter 200ms downinter 200ms fall 2 rise 1\n"
            ));
            for (i, replica) in ports.iter().enumerate() {
                config.push_str(&format!("    server r{i} 127.0.0.1:{replica} check\n"));
            }
        }
        std::fs::write(dir.path("haproxy.cfg"), config).unwrap();
        let child = Command::new(binary)
            .args(["-db", "-q", "-f"])
            .arg(dir.path("haproxy.cfg"))
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        for (service, port) in &frontends {
            wait_for_port(*port, &format!("haproxy's {service} frontend")).await;
        }
        Balancer {
            frontends,
            child,
            dir,
        }
    }

    /// The base URL of `service` through the balancer (its "Kubernetes Service").
    pub fn url(&self, service: &str) -> String {
        format!("http://127.0.0.1:{}", self.frontends[service])
    }

    /// Sends one command to HAProxy's runtime API and returns its answer.
    pub async fn command(&self, command: &str) -> String {
        let mut socket = tokio::net::UnixStream::connect(self.dir.path("admin.sock"))
            .await
            .unwrap();
        socket
            .write_all(format!("{command}\n").as_bytes())
            .await
            .unwrap();
        let mut answer = String::new();
        socket.read_to_string(&mut answer).await.unwrap();
        answer
    }

    /// Every replica's state, from `show stat`.
    pub async fn stats(&self) -> Vec<ReplicaStat> {
        let csv = self.command("show stat").await;
        let mut lines = csv.lines();
        let header: Vec<&str> = lines
            .next()
            .unwrap_or_default()
            .trim_start_matches("# ")
            .split(',')
            .collect();
        let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let (px, sv, status, scur, total) = (
            column("pxname"),
            column("svname"),
            column("status"),
            column("scur"),
            column("stot"),
        );
        lines
            .filter_map(|line| {
                let fields: Vec<&str> = line.split(',').collect();
                let replica = fields.get(sv)?.strip_prefix('r')?.parse().ok()?;
                Some(ReplicaStat {
                    service: fields[px].to_owned(),
                    replica,
                    status: fields[status].to_owned(),
                    current: fields[scur].parse().unwrap_or(0),
                    connections: fields[total].parse().unwrap_or(0),
                })
            })
            .collect()
    }

    /// Waits until every replica of every service is `UP`.
    pub async fn wait_all_up(&self) {
        let started = Instant::now();
        loop {
            let stats = self.stats().await;
            if !stats.is_empty() && stats.iter().all(|s| s.status == "UP") {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "replicas not all up behind the balancer after 30 s: {stats:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until `service`'s replica `replica` is in `status` (`UP`, `DOWN`, ...).
    pub async fn wait_for(&self, service: &str, replica: usize, status: &str) {
        let started = Instant::now();
        loop {
            let stats = self.stats().await;
            if stats
                .iter()
                .any(|s| s.service == service && s.replica == replica && s.status == status)
            {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{service} r{replica} not {status} after 60 s: {stats:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Takes a replica out of rotation (`drain`: no new connection; the open ones stay, as
    /// with an endpoint removed from a Service) or puts it back (`ready`).
    pub async fn set_state(&self, service: &str, replica: usize, state: &str) {
        let answer = self
            .command(&format!("set server {service}/r{replica} state {state}"))
            .await;
        assert!(
            answer.trim().is_empty(),
            "haproxy refused set server {service}/r{replica} state {state}: {answer}"
        );
    }
}

impl Balancer {
    /// Makes a replica unreachable through the balancer: out of rotation (`maint`) and its
    /// open connections cut, as when its pod is gone (an endpoint removal alone leaves the
    /// open connections to it, as kube-proxy does).
    pub async fn cut_off(&self, service: &str, replica: usize) {
        self.set_state(service, replica, "maint").await;
        let answer = self
            .command(&format!("shutdown sessions server {service}/r{replica}"))
            .await;
        assert!(
            answer.trim().is_empty(),
            "haproxy refused shutdown sessions server {service}/r{replica}: {answer}"
        );
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}
