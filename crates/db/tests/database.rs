//! The database crate against a real PostgreSQL: pool, migration lock, template clones.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use db::testing::TestDatabase;
use db::{Migrations, PoolSettings, build_pool, check_ready, run_migrations};
use diesel::sql_types::{BigInt, Text};
use diesel::{QueryableByName, sql_query};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use diesel_migrations::{EmbeddedMigrations, embed_migrations};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

static EMBEDDED: EmbeddedMigrations = embed_migrations!("tests/migrations");
const MIGRATIONS: Migrations = Migrations {
    name: "dbcrate",
    embedded: &EMBEDDED,
    source_dir: concat!(env!("CARGO_MANIFEST_DIR"), "/tests/migrations"),
};

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Setting {
    #[diesel(sql_type = Text)]
    value: String,
}

async fn count(conn: &mut AsyncPgConnection, sql: &str) -> i64 {
    sql_query(sql).get_result::<Count>(conn).await.unwrap().n
}

/// Polls `sql` (a count) until it is `want`; fails after a deadline far past anything a
/// loaded machine needs, so only a state that never comes fails the test.
async fn wait_for_count(conn: &mut AsyncPgConnection, sql: &str, want: i64, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let n = count(conn, sql).await;
        if n == want {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: still {n}, not {want}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[derive(QueryableByName)]
struct Source {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    setting: String,
    #[diesel(sql_type = Text)]
    source: String,
}

/// The timeouts, the values and where PostgreSQL has them from.
async fn timeouts(conn: &mut AsyncPgConnection) -> Vec<(String, String, String)> {
    sql_query(
        "SELECT name, setting, source FROM pg_settings \
         WHERE name IN ('statement_timeout', 'lock_timeout', 'application_name') ORDER BY name",
    )
    .load::<Source>(conn)
    .await
    .unwrap()
    .into_iter()
    .map(|s| (s.name, s.setting, s.source))
    .collect()
}

/// A connection's timeouts come with its startup packet (source `client`), never from a
/// `SET` (source `session`), which behind a pooler in transaction mode would stay on the
/// server connection after the client has gone: the services' as the tools' (none), and
/// next to any `options` the URL gives.
#[tokio::test]
async fn a_connection_gets_its_timeouts_at_startup_not_by_set() {
    let database = TestDatabase::new(MIGRATIONS).await;
    let service = PoolSettings::new(database.url(), 2);
    let mut conn = db::connect(&service).await.unwrap();
    let found = timeouts(&mut conn).await;
    assert_eq!(
        found[1..],
        [
            ("lock_timeout".into(), "5000".into(), "client".into()),
            ("statement_timeout".into(), "10000".into(), "client".into()),
        ]
    );

    let separator = if database.url().contains('?') {
        '&'
    } else {
        '?'
    };
    let url = format!(
        "{}{separator}options=-c%20application_name%3Dfrom-url",
        database.url()
    );
    let mut tool = db::connect(&PoolSettings::one_off(url)).await.unwrap();
    assert_eq!(
        timeouts(&mut tool).await,
        [
            (
                "application_name".into(),
                "from-url".into(),
                "client".into()
            ),
            ("lock_timeout".into(), "0".into(), "client".into()),
            ("statement_timeout".into(), "0".into(), "client".into()),
        ]
    );
}

#[tokio::test]
async fn pool_sets_session_timeouts_and_waits_at_most_its_wait_timeout() {
    let database = TestDatabase::new(MIGRATIONS).await;
    let mut settings = PoolSettings::new(database.url(), 2);
    settings.wait_timeout = Duration::from_millis(300);
    settings.statement_timeout = Duration::from_millis(1500);
    let pool = build_pool(&settings).unwrap();
    check_ready(&pool).await.unwrap();

    let mut first = pool.get().await.unwrap();
    let timeout = sql_query("SELECT current_setting('statement_timeout') AS value")
        .get_result::<Setting>(&mut first)
        .await
        .unwrap();
    assert_eq!(timeout.value, "1500ms");

    // A statement longer than statement_timeout is cancelled by the server.
    let slow = first.batch_execute("SELECT pg_sleep(3)").await;
    assert!(
        slow.is_err(),
        "pg_sleep(3) should hit the 1.5 s statement_timeout"
    );

    let _second = pool.get().await.unwrap();
    let started = Instant::now();
    // Bounded only so that a pool with no wait timeout fails instead of hanging.
    let third = tokio::time::timeout(Duration::from_secs(60), pool.get())
        .await
        .expect("a pool with no wait timeout waits forever");
    assert!(
        matches!(
            third,
            Err(db::PoolError::Timeout(deadpool::managed::TimeoutType::Wait))
        ),
        "a third connection from a pool of two must time out waiting: {:?}",
        third.map(|_| ())
    );
    // This pool's 300 ms, not the 5 s of `PoolSettings::new`: the margin between them is
    // for a loaded machine's late timer.
    let waited = started.elapsed();
    assert!(
        waited >= settings.wait_timeout && waited < Duration::from_secs(4),
        "the pool's wait timeout was not the one applied: waited {waited:?}"
    );
    let status = db::PoolStatus::of(&pool);
    assert_eq!((status.max_size, status.in_use()), (2, 2));
}

#[tokio::test]
async fn pool_size_is_never_below_two() {
    let pool = build_pool(&PoolSettings::new("postgres://nobody@127.0.0.1:1/none", 1)).unwrap();
    assert_eq!(pool.status().max_size, 2);
}

#[tokio::test]
async fn readiness_fails_when_the_server_is_unreachable() {
    let mut settings = PoolSettings::new("postgres://postgres@127.0.0.1:1/none", 2);
    settings.connect_timeout = Duration::from_millis(300);
    let pool = build_pool(&settings).unwrap();
    assert!(check_ready(&pool).await.is_err());
}

#[tokio::test]
async fn two_concurrent_migrate_runs_take_turns_under_the_lock() {
    let database = TestDatabase::empty("migrate").await;
    let settings = PoolSettings::one_off(database.url());
    let (a, b) = tokio::join!(
        run_migrations(&settings, MIGRATIONS),
        run_migrations(&settings, MIGRATIONS)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    // One run applied both migrations, the other found nothing left to do.
    let mut applied = [a.len(), b.len()];
    applied.sort();
    assert_eq!(applied, [0, 2], "a = {a:?}, b = {b:?}");

    let mut conn = database.connect().await;
    assert_eq!(
        count(
            &mut conn,
            "SELECT count(*) AS n FROM __diesel_schema_migrations"
        )
        .await,
        2
    );
    assert_eq!(
        count(&mut conn, "SELECT count(*) AS n FROM gadgets").await,
        0
    );
}

#[tokio::test]
async fn migrate_waits_while_another_holds_the_lock() {
    let database = TestDatabase::empty("lockwait").await;
    let mut holder = database.connect().await;
    sql_query("SELECT pg_advisory_lock($1)")
        .bind::<BigInt, _>(db::MIGRATION_LOCK_KEY)
        .execute(&mut holder)
        .await
        .unwrap();

    let settings = PoolSettings::one_off(database.url());
    let migrate = tokio::spawn(async move { run_migrations(&settings, MIGRATIONS).await });
    // Seen by the server: migrate's session waits on the lock this one holds.
    wait_for_count(
        &mut holder,
        "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' \
         AND wait_event = 'advisory' AND pg_backend_pid() = ANY(pg_blocking_pids(pid))",
        1,
        "sessions waiting on the held migration lock",
    )
    .await;
    assert!(
        !migrate.is_finished(),
        "migrate finished while it waited on the lock"
    );
    assert_eq!(
        count(
            &mut holder,
            "SELECT count(*) AS n FROM pg_tables \
             WHERE tablename IN ('__diesel_schema_migrations', 'widgets', 'gadgets')"
        )
        .await,
        0,
        "migrate wrote while another held the lock"
    );

    sql_query("SELECT pg_advisory_unlock($1)")
        .bind::<BigInt, _>(db::MIGRATION_LOCK_KEY)
        .execute(&mut holder)
        .await
        .unwrap();
    let applied = tokio::time::timeout(Duration::from_secs(60), migrate)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(applied.len(), 2);
}

#[tokio::test]
async fn each_test_database_is_a_separate_migrated_clone_dropped_at_the_end() {
    let one = TestDatabase::new(MIGRATIONS).await;
    let two = TestDatabase::new(MIGRATIONS).await;
    assert_ne!(one.name(), two.name());

    let mut a = one.connect().await;
    let mut b = two.connect().await;
    a.batch_execute("INSERT INTO widgets (name) VALUES ('only in one')")
        .await
        .unwrap();
    assert_eq!(count(&mut a, "SELECT count(*) AS n FROM widgets").await, 1);
    assert_eq!(count(&mut b, "SELECT count(*) AS n FROM widgets").await, 0);
    assert_eq!(
        count(
            &mut b,
            "SELECT count(*) AS n FROM __diesel_schema_migrations"
        )
        .await,
        2
    );

    let name = one.name().to_owned();
    drop(a);
    drop(one);
    let mut admin = AsyncPgConnection::establish(&db::testing::admin_url())
        .await
        .unwrap();
    let left = sql_query("SELECT count(*) AS n FROM pg_database WHERE datname = $1")
        .bind::<Text, _>(&name)
        .get_result::<Count>(&mut admin)
        .await
        .unwrap();
    assert_eq!(left.n, 0, "the test database was not dropped");
}

#[derive(QueryableByName)]
struct Pid {
    #[diesel(sql_type = diesel::sql_types::Integer)]
    pid: i32,
}

/// The last statement the server saw on a backend, asked from another connection.
async fn last_statement(admin: &mut AsyncPgConnection, pid: i32) -> String {
    sql_query(format!(
        "SELECT query AS value FROM pg_stat_activity WHERE pid = {pid}"
    ))
    .get_result::<Setting>(admin)
    .await
    .unwrap()
    .value
}

#[tokio::test]
async fn a_connection_is_checked_only_after_sitting_idle_and_a_dead_one_is_replaced() {
    let database = TestDatabase::new(MIGRATIONS).await;
    let pool = build_pool(&PoolSettings::new(database.url(), 2)).unwrap();
    let mut admin = database.connect().await;

    // Handed out again within PING_AFTER_IDLE of its last checkout: no check, so the
    // server's last statement is still ours. The pool measures idleness from the first
    // checkout, which comes after `started`; a round that took longer than PING_AFTER_IDLE
    // (a loaded machine) shows nothing and is run again.
    let mut rounds = 0;
    let pid = loop {
        rounds += 1;
        let started = Instant::now();
        let pid = {
            let mut conn = pool.get().await.unwrap();
            sql_query("SELECT pg_backend_pid() AS pid")
                .get_result::<Pid>(&mut conn)
                .await
                .unwrap()
                .pid
        };
        drop(pool.get().await.unwrap());
        if started.elapsed() < db::PING_AFTER_IDLE {
            assert_eq!(
                last_statement(&mut admin, pid).await,
                "SELECT pg_backend_pid() AS pid"
            );
            break pid;
        }
        assert!(
            rounds < 50,
            "no two checkouts within {:?} in {rounds} rounds",
            db::PING_AFTER_IDLE
        );
    };

    // Idle past PING_AFTER_IDLE (its last checkout came before `idle_since`): checked on
    // the way out.
    let idle_since = Instant::now();
    idle_past_the_check(idle_since).await;
    drop(pool.get().await.unwrap());
    assert_eq!(last_statement(&mut admin, pid).await, "SELECT 1");

    // The server drops the idle connection (a restart, a failover): the check catches it
    // and the pool hands out a fresh one that works.
    let idle_since = Instant::now();
    admin
        .batch_execute(&format!("SELECT pg_terminate_backend({pid})"))
        .await
        .unwrap();
    wait_for_count(
        &mut admin,
        &format!("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = {pid}"),
        0,
        "the terminated backend",
    )
    .await;
    idle_past_the_check(idle_since).await;
    let mut conn = pool.get().await.unwrap();
    assert_eq!(count(&mut conn, "SELECT 7::bigint AS n").await, 7);
    let fresh = sql_query("SELECT pg_backend_pid() AS pid")
        .get_result::<Pid>(&mut conn)
        .await
        .unwrap()
        .pid;
    assert_ne!(fresh, pid, "the dead connection was handed out");
}

/// Until a connection last checked out before `since` has sat idle for longer than
/// [`db::PING_AFTER_IDLE`]: time itself is the condition here, and a sleep never ends early.
async fn idle_past_the_check(since: Instant) {
    let until = since + db::PING_AFTER_IDLE + Duration::from_millis(10);
    tokio::time::sleep_until(tokio::time::Instant::from_std(until)).await;
}

/// The server's own errors for a statement timeout (57014), a lock timeout and a NOWAIT
/// lock (55P03) and a deadlock (40P01) are retryable: 503, not 500.
#[tokio::test]
async fn timeouts_lock_failures_and_deadlocks_from_the_server_are_busy() {
    let database = TestDatabase::new(MIGRATIONS).await;
    let mut holder = database.connect().await;
    let mut waiter = database.connect().await;
    holder
        .batch_execute("CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1), (2)")
        .await
        .unwrap();
    let busy = |e: diesel::result::Error| {
        let failure = db::Failure::from(e);
        assert!(matches!(failure, db::Failure::Busy(_)), "{failure:?}");
    };
    busy(
        waiter
            .batch_execute("SET statement_timeout = '10ms'; SELECT pg_sleep(5)")
            .await
            .unwrap_err(),
    );
    waiter
        .batch_execute("RESET statement_timeout")
        .await
        .unwrap();

    holder
        .batch_execute("BEGIN; SELECT * FROM t WHERE id = 1 FOR UPDATE")
        .await
        .unwrap();
    busy(
        waiter
            .batch_execute("SELECT * FROM t WHERE id = 1 FOR UPDATE NOWAIT")
            .await
            .unwrap_err(),
    );
    busy(
        waiter
            .batch_execute("SET lock_timeout = '10ms'; SELECT * FROM t WHERE id = 1 FOR UPDATE")
            .await
            .unwrap_err(),
    );
    waiter.batch_execute("RESET lock_timeout").await.unwrap();

    // A deadlock: each holds one row and asks for the other's. The second to ask is the
    // one the server picks (it waits deadlock_timeout, 1 s by default, then checks).
    waiter
        .batch_execute("BEGIN; SELECT * FROM t WHERE id = 2 FOR UPDATE")
        .await
        .unwrap();
    let first = holder.batch_execute("SELECT * FROM t WHERE id = 2 FOR UPDATE");
    let second = waiter.batch_execute("SELECT * FROM t WHERE id = 1 FOR UPDATE");
    let (first, second) = tokio::join!(first, second);
    let lost = match (first, second) {
        (Err(e), Ok(())) | (Ok(()), Err(e)) => e,
        other => panic!("expected exactly one deadlock victim, got {other:?}"),
    };
    busy(lost);
}

/// A query that counts its own session's named statements while it runs sees itself when
/// the statement cache is on (tokio-postgres prepares it as `s<N>`), and nothing when it is
/// off: it then travels as the unnamed statement in one message group, which is what
/// PgBouncer in transaction mode needs (vendor/README.md). Both ways answer the same rows
/// and row counts.
#[tokio::test]
async fn with_the_statement_cache_off_no_statement_is_prepared_under_a_name() {
    let database = TestDatabase::new(MIGRATIONS).await;
    for statement_cache in [true, false] {
        let pool = build_pool(&PoolSettings {
            statement_cache,
            ..PoolSettings::new(database.url(), 2)
        })
        .unwrap();
        let mut conn = pool.get().await.unwrap();
        let named: Count = sql_query("SELECT count(*) AS n FROM pg_prepared_statements WHERE $1")
            .bind::<diesel::sql_types::Bool, _>(true)
            .get_result(&mut conn)
            .await
            .unwrap();
        assert_eq!(
            named.n > 0,
            statement_cache,
            "statement cache {statement_cache}: {} named statements",
            named.n
        );
        let rows = sql_query("SELECT g FROM generate_series(1, $1) g")
            .bind::<diesel::sql_types::Integer, _>(3)
            .execute(&mut conn)
            .await
            .unwrap();
        assert_eq!(rows, 3);
        let setting: Setting = sql_query("SELECT current_setting($1) AS value")
            .bind::<Text, _>("TimeZone")
            .get_result(&mut conn)
            .await
            .unwrap();
        assert_eq!(setting.value, "UTC");
    }
}

/// A host that accepts TCP and never answers (a frozen PostgreSQL): the kernel completes
/// the handshake, the process never reads. Returns its port, the count of connections it
/// accepted, and the guard the listener lives as long as.
async fn silent_host() -> (u16, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            open.push(socket);
        }
    });
    (port, accepted, held)
}

/// `postgres://…@127.0.0.1:<first>,<the test server>/<database>?<query>`.
fn two_hosts(database: &TestDatabase, first: u16, query: &str) -> String {
    let admin: tokio_postgres::Config = database.url().parse().unwrap();
    let port = admin.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://postgres@127.0.0.1:{first},127.0.0.1:{port}/{}?{query}",
        database.name()
    )
}

#[tokio::test]
async fn a_frozen_first_host_costs_one_connect_timeout_once_then_the_next_host_is_first() {
    let database = TestDatabase::new(MIGRATIONS).await;
    let (frozen, tried, _held) = silent_host().await;
    let mut settings = PoolSettings::new(
        two_hosts(&database, frozen, "target_session_attrs=read-write"),
        3,
    );
    settings.connect_timeout = Duration::from_millis(800);
    let pool = build_pool(&settings).unwrap();

    // The frozen host is tried once, for its whole connect timeout (the test's runtime,
    // idle while the connection waits, accepts the socket meanwhile), then the next host.
    let started = Instant::now();
    let mut first = pool.get().await.unwrap();
    let took = started.elapsed();
    assert!(
        took >= settings.connect_timeout,
        "the frozen host should cost its connect timeout, took {took:?}"
    );
    assert_eq!(
        AtomicUsize::load(&tried, Ordering::SeqCst),
        1,
        "frozen host tries"
    );
    assert_eq!(count(&mut first, "SELECT 7::bigint AS n").await, 7);

    // The next new connection starts with the host that answered: the frozen one is not
    // tried again (had it been, its connect timeout would have passed with the socket
    // accepted).
    let mut second = pool.get().await.unwrap();
    assert_eq!(count(&mut second, "SELECT 8::bigint AS n").await, 8);
    assert_eq!(
        AtomicUsize::load(&tried, Ordering::SeqCst),
        1,
        "the second connection tried the frozen host again"
    );
    assert_eq!(pool.status().size, 2, "two connections made");
}

/// A TCP relay to the test server that can be frozen: it then keeps every socket open and
/// forwards nothing, as a stopped PostgreSQL process does (its kernel still acknowledges).
/// A forwarder that found the relay frozen stays stuck even after a thaw.
struct FreezableRelay {
    port: u16,
    frozen: Arc<AtomicBool>,
}

impl FreezableRelay {
    async fn start(upstream: u16) -> FreezableRelay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let frozen = Arc::new(AtomicBool::new(false));
        let flag = frozen.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let server = tokio::net::TcpStream::connect(("127.0.0.1", upstream))
                    .await
                    .unwrap();
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = server.into_split();
                tokio::spawn(forward(client_read, server_write, flag.clone()));
                tokio::spawn(forward(server_read, client_write, flag.clone()));
            }
        });
        FreezableRelay { port, frozen }
    }

    /// From now on every connection stops forwarding at its next bytes, and stays so.
    fn freeze(&self) {
        self.frozen.store(true, Ordering::SeqCst);
    }

    /// New connections are forwarded again; those already frozen stay frozen.
    fn thaw(&self) {
        self.frozen.store(false, Ordering::SeqCst);
    }
}

async fn forward(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    frozen: Arc<AtomicBool>,
) {
    let mut buf = [0u8; 8192];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if AtomicBool::load(&frozen, Ordering::SeqCst) {
            // Hold both sockets and forward nothing, ever.
            std::future::pending::<()>().await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

/// A server that stops answering in the middle of a connection's life (statement_timeout
/// is the server's own and never fires; the kernel keeps acknowledging, so TCP keepalives
/// see nothing wrong): the query fails once the reply deadline passes, the pool drops the
/// connection, and the next one works.
#[tokio::test]
async fn a_query_to_a_server_that_stops_answering_fails_after_the_reply_timeout() {
    let database = TestDatabase::new(MIGRATIONS).await;
    let admin: tokio_postgres::Config = database.url().parse().unwrap();
    let relay = FreezableRelay::start(admin.get_ports().first().copied().unwrap_or(5432)).await;
    let mut settings = PoolSettings::new(
        format!(
            "postgres://postgres@127.0.0.1:{}/{}",
            relay.port,
            database.name()
        ),
        2,
    );
    settings.statement_timeout = Duration::from_millis(200);
    let limit = settings.reply_timeout();
    let pool = build_pool(&settings).unwrap();
    let mut conn = pool.get().await.unwrap();
    assert_eq!(count(&mut conn, "SELECT 1::bigint AS n").await, 1);

    relay.freeze();
    let started = Instant::now();
    // Bounded only so that a connection with no deadline fails instead of hanging.
    let stuck = tokio::time::timeout(
        limit + Duration::from_secs(60),
        sql_query("SELECT 2::bigint AS n").get_result::<Count>(&mut conn),
    )
    .await
    .expect("the query waited past its reply deadline");
    assert!(
        stuck.is_err(),
        "a frozen server answered: {:?}",
        stuck.map(|c| c.n)
    );
    assert!(started.elapsed() >= limit, "{:?}", started.elapsed());
    drop(conn);

    // The server answers again on new connections; the frozen one is never handed out
    // again (its relay is stuck for good, so reusing it would hang or fail).
    relay.thaw();
    let mut next = pool.get().await.unwrap();
    assert_eq!(count(&mut next, "SELECT 3::bigint AS n").await, 3);
}

/// The HTTP server's workers are runtimes of their own that end one by one during a graceful
/// stop, while the pool is shared by all of them: a connection a worker opened must outlive
/// that worker, else another worker's request still using it fails with "connection closed".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_opened_on_a_runtime_that_ended_still_serves_the_others() {
    let database = TestDatabase::new(MIGRATIONS).await;
    let pool = build_pool(&PoolSettings::new(database.url(), 2)).unwrap();
    let opened_elsewhere = pool.clone();
    // A worker: a runtime of its own on a thread of its own, as actix's are, that opens a
    // connection (the pool was empty), hands it back, and ends.
    let worker = std::thread::spawn(move || {
        let worker = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        worker.block_on(async move {
            let mut conn = opened_elsewhere.get().await.unwrap();
            sql_query("SELECT pg_backend_pid() AS pid")
                .get_result::<Pid>(&mut conn)
                .await
                .unwrap()
                .pid
        })
    });
    let pid = tokio::task::spawn_blocking(move || worker.join().unwrap())
        .await
        .unwrap();

    let mut conn = pool.get().await.unwrap();
    let again = sql_query("SELECT pg_backend_pid() AS pid")
        .get_result::<Pid>(&mut conn)
        .await
        .expect("the connection the ended runtime opened still answers");
    assert_eq!(again.pid, pid, "the pool handed out another connection");
}
