//! The harness for end-to-end tests: the real service binaries as child processes, on free
//! ports, against real PostgreSQL databases, and a throwaway PostgreSQL cluster for tests
//! that stop the database under a running service.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a harness fails loudly on purpose

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};

pub use log::Log;

pub mod balancer;
pub mod demo;
pub mod drill_plant;
pub mod log;
pub mod money;
pub mod patroni;
pub mod pg_server;
pub mod pgbouncer;
pub mod prometheus;
pub mod promql_names;
pub mod replicated;
pub mod sockets;
pub mod stack;
pub mod tools;

/// The four service binaries, with the database each uses.
pub const SERVICES: [(&str, &str); 4] = [
    ("auth-service", "auth"),
    ("point-service", "points"),
    ("order-service", "catalog"),
    ("operator-service", "catalog"),
];

/// The development settings (`scripts/dev.env`), the same that `make run`, `make fuzz-api`
/// and `make bench` start the services with; read when the harness is built.
const DEV_ENV: &str = include_str!("../../scripts/dev.env");

/// The `NAME=value` pairs of `scripts/dev.env`: every service start gets them.
pub fn dev_env() -> impl Iterator<Item = (&'static str, &'static str)> {
    DEV_ENV
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            line.split_once('=')
                .unwrap_or_else(|| panic!("scripts/dev.env: not NAME=value: {line}"))
        })
}

/// One value of `scripts/dev.env`, for the tests that sign or forge with a secret:
/// `dev("PAYMENT_WEBHOOK_SECRET")`.
pub fn dev(name: &str) -> &'static str {
    dev_env()
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
        .unwrap_or_else(|| panic!("scripts/dev.env has no {name}"))
}

/// How long the tests' own clients keep an idle connection, as the ingress controller does in
/// front of the services (`upstream-keepalive-timeout`, k8s/ingress-nginx/controller-config.yaml):
/// 5 s or more below the services' stop drain (`HTTP_STOP_DRAIN_SECS`, 10 s by default), so a
/// client that plays the app never sends on a connection a stopping service closes
/// (docs/decisions.md, "Lossless rollouts"). A test that shortens the drain gives its own
/// client a shorter idle time (tests/system/rolling_stop.rs).
pub const CLIENT_IDLE: Duration = Duration::from_secs(4);

/// The workspace root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// A built binary of the workspace (`make test` builds them before the tests run).
pub fn binary(name: &str) -> PathBuf {
    // A test executable is target/<profile>/deps/<test>, a tool (the soak driver) is
    // target/<profile>/<tool>; the service binaries are in target/<profile>.
    let exe = std::env::current_exe().unwrap();
    let mut dir = exe.parent().unwrap();
    if dir.ends_with("deps") {
        dir = dir.parent().unwrap();
    }
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --workspace --bins` first (`make test` does)",
        path.display()
    );
    path
}

/// A port nobody listens on now, and that no other test process is given while this one
/// runs.
///
/// Tests run side by side, each in its own process, and several stop a service and start it
/// again on the same port (a crash, a rolling restart). Taken from the kernel (`bind` to port
/// 0), a port freed for a moment could go to another test's service, which then answered
/// this test's requests (a CI flake: an auth service's 404 where a point order was expected).
/// So ports come from just below the kernel's ephemeral range, where neither `bind` to port 0
/// nor an outgoing connection's source port ever lands, and each is held for this process by
/// an exclusive lock on a file named after it, released when the process ends.
pub fn free_port() -> u16 {
    static HELD: Mutex<Vec<std::fs::File>> = Mutex::new(Vec::new());
    let dir = std::env::temp_dir().join("loyalty-test-ports");
    std::fs::create_dir_all(&dir).unwrap();
    let ephemeral = ephemeral_ports_start();
    let first = ephemeral.saturating_sub(12_000).max(1024);
    for _ in 0..10_000 {
        let port = first + (uuid::Uuid::new_v4().as_u128() % u128::from(ephemeral - first)) as u16;
        let lock = std::fs::File::create(dir.join(port.to_string())).unwrap();
        if lock.try_lock().is_ok() && std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            HELD.lock().unwrap().push(lock);
            return port;
        }
    }
    panic!("no free port in {first}..{ephemeral}");
}

/// The first port of the kernel's ephemeral range (`net.ipv4.ip_local_port_range`).
fn ephemeral_ports_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(32768)
}

/// The environment every service start gets in these tests: nothing of the test's own
/// environment but `PATH`, the development settings (`scripts/dev.env`: secrets, the SMS
/// log provider, point orders on), JSON logs to read back, one worker and a small pool.
fn base_env(command: &mut Command, database_url: &str) {
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(dev_env())
        .env("LOG_FORMAT", "json")
        .env("RUST_LOG", "info")
        .env("HTTP_WORKERS", "1")
        .env("DATABASE_URL", database_url)
        .env("DATABASE_POOL_SIZE", "2")
        // Nothing listens there; tests that relay set the real address.
        .env("POINT_SERVICE_URL", "http://127.0.0.1:9");
}

/// Secrets a production start accepts (at least 32 characters, no `dev-only` marker), in
/// place of `scripts/dev.env`'s, which it refuses: for tests of production starts.
pub const PRODUCTION_SECRETS: [(&str, &str); 5] = [
    (
        "AUTH_JWT_SECRET",
        "e2e-production-auth-jwt-secret-0123456789",
    ),
    (
        "OPERATOR_JWT_SECRET",
        "e2e-production-operator-jwt-secret-01234",
    ),
    (
        "PAYMENT_WEBHOOK_SECRET",
        "e2e-production-webhook-secret-0123456789",
    ),
    // The order service's key (`service-identity keygen`), which every service here signs
    // with, and the trust list of a service it calls: enough for a production start, which
    // refuses only the development issuer's keys.
    (
        "SERVICE_IDENTITY_KEY",
        "e2e-production:skp1ze-ugCOD35MNbKs3oae6WChywMBBJdfEDm9prGA",
    ),
    (
        "SERVICE_IDENTITY_TRUST",
        "order-service:e2e-production:yiyUdO39FzCrGyFSp4csUTVD6tBjIvtjscyeeMqnt5g",
    ),
];

/// An operator token from the operator binary's own `token` subcommand, under the
/// development key, valid for `hours` (negative: already expired).
pub fn operator_token(role: &str, sub: &str, hours: i64) -> String {
    let output = std::process::Command::new(binary("operator-service"))
        .args(["token", "--role", role, "--sub", sub])
        .arg(format!("--hours={hours}"))
        .env("OPERATOR_JWT_SECRET", dev("OPERATOR_JWT_SECRET"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// Runs a subcommand to completion (`migrate`, `seed FILE`) and returns its output.
pub async fn run(
    name: &str,
    args: &[&str],
    database_url: &str,
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut command = Command::new(binary(name));
    base_env(&mut command, database_url);
    command
        .args(args)
        .envs(env.iter().copied())
        .kill_on_drop(true);
    tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .unwrap_or_else(|_| panic!("{name} {args:?} did not finish within 60 s"))
        .unwrap()
}

/// Spawns `command` with its stdout and stderr read into a [`Log`] of `name`.
fn spawn_logged(name: &'static str, mut command: Command) -> (Child, Log) {
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let log = Log::new(name);
    log.read(child.stdout.take().unwrap());
    log.read(child.stderr.take().unwrap());
    (child, log)
}

/// A subcommand running in the background (`wait-for-migrations`), its output read as it
/// comes, for a test to see where it is before it ends.
pub struct Running {
    pub name: &'static str,
    child: Child,
    log: Log,
}

impl Running {
    /// Starts `name args` with the services' test environment.
    pub fn start(
        name: &'static str,
        args: &[&str],
        database_url: &str,
        env: &[(&str, &str)],
    ) -> Running {
        let mut command = Command::new(binary(name));
        base_env(&mut command, database_url);
        command.args(args).envs(env.iter().copied());
        let (child, log) = spawn_logged(name, command);
        Running { name, child, log }
    }

    pub fn log(&self) -> &Log {
        &self.log
    }

    /// Its exit status if it has ended, without waiting.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().unwrap()
    }

    /// Waits for it to end, at most 60 s, and returns its status and every line it wrote.
    pub async fn finish(mut self) -> (ExitStatus, Vec<String>) {
        let status = tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("{} did not end within 60 s", self.name))
            .unwrap();
        (status, self.log.written().await)
    }
}

/// A running service process.
pub struct Service {
    pub name: &'static str,
    pub base: String,
    child: Child,
    log: Log,
    client: reqwest::Client,
}

impl Service {
    /// Starts `name` serving on a free port and waits until `/healthz` answers.
    pub async fn start(name: &'static str, database_url: &str, env: &[(&str, &str)]) -> Service {
        Self::start_on(name, free_port(), database_url, env).await
    }

    /// Starts `name` on `port` (a restart takes the port its callers know).
    pub async fn start_on(
        name: &'static str,
        port: u16,
        database_url: &str,
        env: &[(&str, &str)],
    ) -> Service {
        let mut command = Command::new(binary(name));
        base_env(&mut command, database_url);
        command
            .arg("serve")
            .env("BIND_ADDR", format!("127.0.0.1:{port}"))
            .envs(env.iter().copied());
        let (child, log) = spawn_logged(name, command);
        let mut service = Service {
            name,
            base: format!("http://127.0.0.1:{port}"),
            child,
            log,
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .pool_idle_timeout(CLIENT_IDLE)
                .build()
                .unwrap(),
        };
        // This process's own "listening" first: `free_port` only finds a port that was free,
        // and when a process of another test takes it meanwhile, this one cannot bind and
        // exits, while the other answers `/healthz` on the port as if it were this one.
        service.wait_until_listening(Duration::from_secs(15)).await;
        service
            .wait_until(Duration::from_secs(15), |status| status == 200, "/healthz")
            .await;
        service
    }

    /// Waits for the process's log line saying it listens on its port; panics with its logs
    /// when it exits first (it could not bind) or does not say so `within`.
    async fn wait_until_listening(&mut self, within: Duration) {
        let started = Instant::now();
        while started.elapsed() < within {
            if self.logs().iter().any(|line| line.contains("listening")) {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "{} exited ({status}) before listening; logs:\n{}",
                    self.name,
                    self.logs().join("\n")
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!(
            "{} did not say it listens within {within:?}; logs:\n{}",
            self.name,
            self.logs().join("\n")
        );
    }

    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap()
    }

    /// Polls `path` until `accept` holds for its status; panics after `within`.
    pub async fn wait_until(
        &self,
        within: Duration,
        accept: impl Fn(u16) -> bool,
        path: &str,
    ) -> u16 {
        let started = Instant::now();
        let mut last = None;
        while started.elapsed() < within {
            if let Ok(response) = self.client.get(format!("{}{path}", self.base)).send().await {
                let status = response.status().as_u16();
                if accept(status) {
                    return status;
                }
                last = Some(status);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "{} {path}: no accepted answer within {within:?} (last {last:?}); logs:\n{}",
            self.name,
            self.logs().join("\n")
        );
    }

    /// Every line of the process the harness has read so far, stdout and stderr (a line
    /// written just now may not be there yet: wait on [`Service::log`] for one).
    pub fn logs(&self) -> Vec<String> {
        self.log.lines()
    }

    /// Its log, to wait on.
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.base.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// Sends SIGKILL, as a crash or an OOM kill would, without waiting.
    pub fn crash(&self) {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }

    /// Kills it with SIGKILL, as a crash or an OOM kill would, and waits for it to be gone.
    pub async fn kill(&mut self) {
        self.child.kill().await.unwrap();
    }

    /// Sends SIGTERM and waits for the process to exit.
    pub async fn terminate(mut self) -> ExitStatus {
        self.stop().await
    }

    /// Sends SIGTERM, as Kubernetes does to stop a pod, and waits for the process to exit.
    pub async fn stop(&mut self) -> ExitStatus {
        self.signal_term();
        self.exited().await
    }

    /// Sends SIGTERM without waiting.
    pub fn signal_term(&self) {
        let pid = self.child.id().unwrap();
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }

    /// Waits for the process to exit, at most 55 s (above the pods' 50 s grace period: the
    /// caller judges the time it took).
    pub async fn exited(&mut self) -> ExitStatus {
        tokio::time::timeout(Duration::from_secs(55), self.child.wait())
            .await
            .unwrap()
            .unwrap()
    }
}

/// A PostgreSQL cluster of the test's own, on its own port, that the test may stop and
/// start (never the shared server). Made by `scripts/postgres.sh start-local`.
pub struct LocalCluster {
    dir: PathBuf,
    pub port: u16,
}

impl LocalCluster {
    pub fn start() -> LocalCluster {
        let dir =
            std::env::temp_dir().join(format!("loyalty-e2e-pg-{}", uuid::Uuid::new_v4().simple()));
        let cluster = LocalCluster {
            dir,
            port: free_port(),
        };
        cluster.up();
        cluster
    }

    fn script(&self, args: &[&str]) {
        let output = std::process::Command::new(repo_root().join("scripts/postgres.sh"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "scripts/postgres.sh {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// Starts (or restarts) the cluster.
    pub fn up(&self) {
        self.script(&[
            "start-local",
            self.dir.to_str().unwrap(),
            &self.port.to_string(),
        ]);
    }

    /// Its folder: `data/` (the cluster), the socket and `server.log`.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// Stops it cleanly (a checkpoint first), as before maintenance.
    pub fn stop(&self) {
        self.script(&["stop-local", self.dir.to_str().unwrap(), "fast"]);
    }

    /// Stops it the hard way, as a crash or a node loss would.
    pub fn kill(&self) {
        self.script(&["stop-local", self.dir.to_str().unwrap(), "immediate"]);
    }

    pub fn admin_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Freezes the whole server (SIGSTOP to the postmaster and every process it started):
    /// its kernel still completes TCP handshakes and acknowledges data, but nothing answers,
    /// as with a hung host or a paused VM whose network stays up.
    pub fn freeze(&self) {
        assert!(self.signal_all("-STOP"), "cannot freeze the server");
    }

    /// Lets a frozen server run again.
    pub fn thaw(&self) {
        assert!(self.signal_all("-CONT"), "cannot thaw the server");
    }

    /// Sends `signal` to the server's processes; false when it is not running.
    fn signal_all(&self, signal: &str) -> bool {
        let Ok(pid_file) = std::fs::read_to_string(self.dir.join("data/postmaster.pid")) else {
            return false;
        };
        let postmaster = pid_file
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned();
        let children = std::process::Command::new("pgrep")
            .args(["-P", &postmaster])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        // The postmaster first, so that it starts no new process meanwhile.
        let pids = std::iter::once(postmaster.as_str())
            .chain(children.split_whitespace())
            .collect::<Vec<_>>();
        std::process::Command::new("kill")
            .arg(signal)
            .args(&pids)
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        // A frozen server cannot stop; a running one ignores this.
        let _ = self.signal_all("-CONT");
        let _ = std::process::Command::new(repo_root().join("scripts/postgres.sh"))
            .args([
                "stop-local",
                self.dir.to_str().unwrap_or_default(),
                "immediate",
            ])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Creates an empty database on a server and returns its URL.
pub async fn create_database(admin_url: &str, name: &str) -> String {
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
    let mut admin = AsyncPgConnection::establish(admin_url).await.unwrap();
    diesel::sql_query(format!("CREATE DATABASE {}", db::quote_ident(name)))
        .execute(&mut admin)
        .await
        .unwrap();
    db::with_database(admin_url, name).unwrap()
}

/// The three databases made on the server at `admin_url`, migrated and seeded with the demo
/// fixture, each demo client funded generously and `codes` gift codes `<prefix>-0000`... worth
/// 10 points added: what the drills (`make failover`, `make restore-drill`) load.
pub async fn loaded_databases(admin_url: &str, prefix: &str, codes: usize) -> stack::Databases {
    let databases = stack::Databases {
        auth: create_database(admin_url, "auth").await,
        points: create_database(admin_url, "points").await,
        catalog: create_database(admin_url, "catalog").await,
    };
    migrate_and_seed(&["auth-service"], &databases.auth).await;
    migrate_and_seed(&["point-service"], &databases.points).await;
    migrate_and_seed(&["order-service", "operator-service"], &databases.catalog).await;
    money::fund(&databases.points, 10_000_000).await;
    money::add_gift_codes(&databases.catalog, prefix, codes, "10").await;
    databases
}

/// An empty database, migrated and seeded with the demo fixture by each of `services` (the
/// services that share it load their own sections).
pub async fn demo_database(services: &[&str], label: &str) -> db::testing::TestDatabase {
    let database = db::testing::TestDatabase::empty(label).await;
    migrate_and_seed(services, database.url()).await;
    database
}

/// Migrates the database at `url` and seeds the demo fixture, as each of `services`.
pub async fn migrate_and_seed(services: &[&str], url: &str) {
    let fixture = repo_root().join("deploy/fixtures/demo.json");
    for name in services {
        for args in [vec!["migrate"], vec!["seed", fixture.to_str().unwrap()]] {
            let output = run(name, &args, url, &[]).await;
            assert!(
                output.status.success(),
                "{name} {args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
}

/// The services that migrate and seed each of the system's databases (the two catalog
/// services load their own sections of the shared one).
const DATABASE_OWNERS: [(&str, &[&str]); 3] = [
    ("auth", &["auth-service"]),
    ("points", &["point-service"]),
    ("catalog", &["order-service", "operator-service"]),
];

/// The system's three databases on the test server, each migrated and seeded with the demo
/// fixture; dropped with this value, so keep it alive as long as the processes using it.
pub struct DemoDatabases {
    pub auth: db::testing::TestDatabase,
    pub points: db::testing::TestDatabase,
    pub catalog: db::testing::TestDatabase,
}

impl DemoDatabases {
    /// The three, named after `label` (`<label>_auth`, ...) so a leftover says whose it is.
    pub async fn create(label: &str) -> DemoDatabases {
        let [auth, points, catalog] = DATABASE_OWNERS.map(|(name, services)| async move {
            demo_database(services, &format!("{label}_{name}")).await
        });
        DemoDatabases {
            auth: auth.await,
            points: points.await,
            catalog: catalog.await,
        }
    }

    pub fn urls(&self) -> stack::Databases {
        stack::Databases {
            auth: self.auth.url().to_owned(),
            points: self.points.url().to_owned(),
            catalog: self.catalog.url().to_owned(),
        }
    }
}

/// The system's three databases made on a server of the test's own (a [`LocalCluster`]),
/// migrated and seeded with the demo fixture.
pub async fn demo_databases_on(admin_url: &str) -> stack::Databases {
    let [auth, points, catalog] = DATABASE_OWNERS.map(|(name, services)| async move {
        let url = create_database(admin_url, name).await;
        migrate_and_seed(services, &url).await;
        url
    });
    stack::Databases {
        auth: auth.await,
        points: points.await,
        catalog: catalog.await,
    }
}
