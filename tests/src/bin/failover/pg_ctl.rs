//! The failover without a failover manager: a primary, a streaming standby made by
//! `scripts/pg-standby.sh`, and the promotion done by this driver (`FAILOVER_ENGINE=pg_ctl`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use e2e::{free_port, repo_root};

/// The standby: a base backup of the primary, streaming from it, synchronous.
pub(crate) struct Standby {
    dir: PathBuf,
    pub(crate) port: u16,
}

impl Standby {
    /// Stops it the hard way (the standby's host is lost).
    pub(crate) fn stop(&self) {
        let output = std::process::Command::new(repo_root().join("scripts/postgres.sh"))
            .args(["stop-local", self.dir.to_str().unwrap(), "immediate"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// Starts it again on its port: still a standby (its standby.signal), it reconnects to
    /// the primary and catches up.
    pub(crate) fn restart(&self) {
        let output = std::process::Command::new(repo_root().join("scripts/postgres.sh"))
            .args([
                "start-local",
                self.dir.to_str().unwrap(),
                &self.port.to_string(),
            ])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    pub(crate) fn start(primary_port: u16) -> Standby {
        let standby = Standby {
            dir: std::env::temp_dir().join(format!(
                "loyalty-failover-standby-{}",
                uuid::Uuid::new_v4().simple()
            )),
            port: free_port(),
        };
        standby.script(&[
            "start",
            &primary_port.to_string(),
            standby.dir.to_str().unwrap(),
            &standby.port.to_string(),
        ]);
        standby
    }

    pub(crate) fn promote(&self) {
        self.script(&["promote", self.dir.to_str().unwrap()]);
    }

    fn script(&self, args: &[&str]) {
        let output = std::process::Command::new(repo_root().join("scripts/pg-standby.sh"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "scripts/pg-standby.sh {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

impl Drop for Standby {
    fn drop(&mut self) {
        let _ = std::process::Command::new(repo_root().join("scripts/postgres.sh"))
            .args(["stop-local", self.dir.to_str().unwrap(), "immediate"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Commits on the primary wait for the standby from now on; returns once it is in sync.
pub(crate) async fn make_synchronous(admin: &str) {
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
    let mut conn = AsyncPgConnection::establish(admin).await.unwrap();
    // Two statements: ALTER SYSTEM refuses to run in the implicit transaction of a batch.
    for statement in [
        "ALTER SYSTEM SET synchronous_standby_names = '*'",
        "SELECT pg_reload_conf()",
    ] {
        conn.batch_execute(statement).await.unwrap();
    }
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let started = Instant::now();
    loop {
        let sync: N = diesel::sql_query(
            "SELECT count(*) AS n FROM pg_stat_replication WHERE sync_state = 'sync'",
        )
        .get_result(&mut conn)
        .await
        .unwrap();
        if sync.n == 1 {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the standby is not synchronous after 30 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
