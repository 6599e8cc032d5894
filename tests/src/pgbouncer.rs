//! A real PgBouncer (Debian's, 1.18 on Debian 12) run with the deployment's own settings
//! (k8s/components/pgbouncer/pgbouncer.ini: transaction pooling, the server connections'
//! `connect_query`, `query_wait_timeout`, ...), only its address, authentication, log
//! files and pool size replaced by the test's, in front of the test's PostgreSQL server.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use tokio::process::{Child, Command};

use crate::tools::{WorkDir, debian_binary, wait_for_port};
use crate::{free_port, repo_root};

/// The deployment's PgBouncer configuration, which the tests run.
pub const DEPLOYMENT_INI: &str = "k8s/components/pgbouncer/pgbouncer.ini";

/// The `[pgbouncer]` settings the test sets itself; every other one is the deployment's.
const TEST_OWN: [&str; 11] = [
    "listen_addr",
    "listen_port",
    "unix_socket_dir",
    "auth_type",
    "auth_file",
    "admin_users",
    "default_pool_size",
    "min_pool_size",
    "reserve_pool_size",
    "logfile",
    "pidfile",
];

pub struct PgBouncer {
    pub port: u16,
    child: Child,
    dir: WorkDir,
}

impl PgBouncer {
    /// PgBouncer on a free port forwarding every database to the server on `upstream_port`
    /// (user `postgres`, trust), with exactly `server_connections` server connections per
    /// database (no reserve), handed out per transaction.
    pub async fn start(upstream_port: u16, server_connections: u32) -> PgBouncer {
        let dir = WorkDir::new("pgbouncer");
        let port = free_port();
        std::fs::write(dir.path("users.txt"), "\"postgres\" \"\"\n").unwrap();
        let own = [
            ("listen_addr", "127.0.0.1".to_owned()),
            ("listen_port", port.to_string()),
            ("unix_socket_dir", String::new()),
            ("auth_type", "trust".to_owned()),
            ("auth_file", dir.path("users.txt").display().to_string()),
            ("admin_users", "postgres".to_owned()),
            ("default_pool_size", server_connections.to_string()),
            ("min_pool_size", "0".to_owned()),
            ("reserve_pool_size", "0".to_owned()),
            ("logfile", dir.path("pgbouncer.log").display().to_string()),
            ("pidfile", dir.path("pgbouncer.pid").display().to_string()),
        ];
        let config = test_config(&deployment_ini(), upstream_port, &own);
        std::fs::write(dir.path("pgbouncer.ini"), config).unwrap();
        let child = spawn(&dir.path("pgbouncer.ini"));
        wait_for_port(port, "pgbouncer").await;
        PgBouncer { port, child, dir }
    }

    /// The URL of `database` through the pooler.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// Stops PgBouncer as Kubernetes does (SIGINT, the image's stop signal: its safe
    /// shutdown), waits for it to exit, and starts it again on the same port: every client
    /// connection is closed, and new ones are accepted once this returns.
    pub async fn restart(&mut self) {
        let pid = self.child.id().expect("pgbouncer is running");
        let status = std::process::Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -INT {pid}");
        tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("pgbouncer did not stop within 30 s of SIGINT")
            .unwrap();
        self.child = spawn(&self.dir.path("pgbouncer.ini"));
        wait_for_port(self.port, "pgbouncer").await;
    }

    /// Runs a command of PgBouncer's admin console (`SHOW POOLS`, ...) and returns its rows
    /// as column name → value maps.
    pub async fn admin(&self, command: &str) -> Vec<HashMap<String, String>> {
        let (client, connection) = tokio_postgres::connect(
            &format!(
                "host=127.0.0.1 port={} user=postgres dbname=pgbouncer",
                self.port
            ),
            tokio_postgres::NoTls,
        )
        .await
        .unwrap();
        tokio::spawn(connection);
        let messages = tokio::time::timeout(Duration::from_secs(10), client.simple_query(command))
            .await
            .unwrap()
            .unwrap();
        messages
            .into_iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(row) => Some(
                    row.columns()
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            (
                                c.name().to_owned(),
                                row.get(i).unwrap_or_default().to_owned(),
                            )
                        })
                        .collect(),
                ),
                _ => None,
            })
            .collect()
    }

    /// Its log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

fn spawn(config: &std::path::Path) -> Child {
    let mut command = Command::new(debian_binary("pgbouncer", "pgbouncer"));
    // PgBouncer refuses to run as root; -u drops to `postgres` after reading the config.
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    if root {
        command.args(["-u", "postgres"]);
    }
    command.arg(config).kill_on_drop(true).spawn().unwrap()
}

fn deployment_ini() -> String {
    let path: PathBuf = repo_root().join(DEPLOYMENT_INI);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A `[pgbouncer]` setting of the deployment's configuration, e.g. `query_wait_timeout`.
pub fn deployment_setting(name: &str) -> Option<String> {
    settings(&deployment_ini(), "pgbouncer")
        .into_iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value)
}

/// The `connect_query` the deployment gives every server connection.
pub fn deployment_connect_query() -> String {
    let ini = deployment_ini();
    let (_, every_database) = settings(&ini, "databases")
        .into_iter()
        .find(|(key, _)| key == "*")
        .expect("the deployment's [databases] has a `*` entry");
    connect_query(&every_database).expect("the `*` entry has a connect_query")
}

/// The `key = value` lines of `[section]`, comments and blank lines left out.
fn settings(ini: &str, section: &str) -> Vec<(String, String)> {
    let mut current = String::new();
    let mut found = Vec::new();
    for line in ini.lines().map(str::trim) {
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name.to_owned();
        } else if current == section
            && let Some((key, value)) = line.split_once('=')
        {
            found.push((key.trim().to_owned(), value.trim().to_owned()));
        }
    }
    found
}

/// `connect_query='…'` out of a `[databases]` entry.
fn connect_query(entry: &str) -> Option<String> {
    let rest = entry.split_once("connect_query='")?.1;
    Some(rest.split_once('\'')?.0.to_owned())
}

/// The deployment's configuration with the server at `127.0.0.1:upstream_port` and the
/// test's `own` settings in place of the deployment's.
fn test_config(deployment: &str, upstream_port: u16, own: &[(&str, String)]) -> String {
    let mut config = String::from("[databases]\n");
    let (_, every_database) = settings(deployment, "databases")
        .into_iter()
        .find(|(key, _)| key == "*")
        .expect("the deployment's [databases] has a `*` entry");
    let query = connect_query(&every_database).expect("the `*` entry has a connect_query");
    config.push_str(&format!(
        "* = host=127.0.0.1 port={upstream_port} connect_query='{query}'\n[pgbouncer]\n"
    ));
    for (key, value) in settings(deployment, "pgbouncer") {
        if !TEST_OWN.contains(&key.as_str()) {
            config.push_str(&format!("{key} = {value}\n"));
        }
    }
    for (key, value) in own {
        assert!(TEST_OWN.contains(key), "{key} is not one of the test's own");
        config.push_str(&format!("{key} = {value}\n"));
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In transaction pooling a service's own `SET` lands on whichever server connection
    /// ran it, so every server connection must get the pool's session setup from PgBouncer:
    /// the two are one rule, written in `db::PoolSettings` and repeated in the ini (which
    /// Kubernetes reads as a file), and this keeps them equal.
    #[test]
    fn the_deployment_gives_every_server_connection_the_pools_session_setup() {
        let pool = db::PoolSettings::new("postgres://unused@127.0.0.1/unused", 2);
        assert_eq!(deployment_connect_query(), pool.session_setup());
    }

    #[test]
    fn the_test_keeps_the_deployments_settings_and_replaces_only_its_own() {
        let deployment = "; comment\n[databases]\n* = host=postgres port=5432 connect_query='SET a = 1'\n\
                          [pgbouncer]\nlisten_port = 6432\npool_mode = transaction\nquery_wait_timeout = 5\n";
        let config = test_config(deployment, 5999, &[("listen_port", "7000".to_owned())]);
        assert_eq!(
            config,
            "[databases]\n* = host=127.0.0.1 port=5999 connect_query='SET a = 1'\n[pgbouncer]\n\
             pool_mode = transaction\nquery_wait_timeout = 5\nlisten_port = 7000\n"
        );
    }
}
