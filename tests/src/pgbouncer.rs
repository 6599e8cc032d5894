//! A real PgBouncer (Debian's, 1.18 on Debian 12) in transaction pooling mode in front of a
//! PostgreSQL server, on a free port, for tests of the services behind a pooler.

use std::time::Duration;

use tokio::process::{Child, Command};

use crate::free_port;
use crate::tools::{WorkDir, debian_binary, wait_for_port};

pub struct PgBouncer {
    pub port: u16,
    child: Child,
    dir: WorkDir,
}

impl PgBouncer {
    /// PgBouncer on a free port forwarding every database to the server on `upstream_port`
    /// (user `postgres`, trust), with at most `server_connections` server connections per
    /// database, handed out per transaction.
    pub async fn start(upstream_port: u16, server_connections: u32) -> PgBouncer {
        let binary = debian_binary("pgbouncer", "pgbouncer");
        let dir = WorkDir::new("pgbouncer");
        let port = free_port();
        std::fs::write(dir.path("users.txt"), "\"postgres\" \"\"\n").unwrap();
        // Every database name reaches the same name upstream (the `*` fallback). In
        // transaction pooling a service's own `SET statement_timeout` lands on whichever
        // server connection ran it, so every server connection gets the timeouts from
        // `connect_query`, as the deployment's PgBouncer does (k8s/components/pgbouncer).
        let config = format!(
            "[databases]\n\
             * = host=127.0.0.1 port={upstream_port} connect_query='SET statement_timeout = 10000; SET lock_timeout = 5000'\n\
             [pgbouncer]\n\
             listen_addr = 127.0.0.1\n\
             listen_port = {port}\n\
             unix_socket_dir =\n\
             auth_type = trust\n\
             auth_file = {users}\n\
             admin_users = postgres\n\
             pool_mode = transaction\n\
             default_pool_size = {server_connections}\n\
             min_pool_size = 0\n\
             reserve_pool_size = 0\n\
             max_client_conn = 500\n\
             server_reset_query =\n\
             logfile = {log}\n\
             pidfile = {pid}\n",
            users = dir.path("users.txt").display(),
            log = dir.path("pgbouncer.log").display(),
            pid = dir.path("pgbouncer.pid").display(),
        );
        std::fs::write(dir.path("pgbouncer.ini"), config).unwrap();
        let mut command = Command::new(binary);
        // PgBouncer refuses to run as root; -u drops to `postgres` after reading the config.
        let root = std::process::Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
        if root {
            command.args(["-u", "postgres"]);
        }
        let child = command
            .arg(dir.path("pgbouncer.ini"))
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        wait_for_port(port, "pgbouncer").await;
        PgBouncer { port, child, dir }
    }

    /// The URL of `database` through the pooler.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// Runs a command of PgBouncer's admin console (`SHOW POOLS`, ...) and returns its rows
    /// as column name → value maps.
    pub async fn admin(&self, command: &str) -> Vec<std::collections::HashMap<String, String>> {
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
