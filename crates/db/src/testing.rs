//! A database of its own for each test, cloned from a migrated template (the model is
//! crates.io's test-db crate). Clones are cheap, so tests run in parallel without ever
//! seeing each other's rows, and concurrency tests get real, separate connections.
//!
//! The server comes from `TEST_DATABASE_URL` (any database on it; `make test` sets it),
//! else `postgres://postgres@127.0.0.1:5432/postgres`. The template's name carries a hash of
//! the migration files, so a changed migration gets a fresh template; test processes that
//! start together build it once, under an advisory lock.

use std::path::Path;

use diesel::sql_types::{BigInt, Text};
use diesel::{QueryableByName, sql_query};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use sha2::{Digest, Sha256};

use crate::{Migrations, quote_ident, run_migrations, with_database};

pub const DEFAULT_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// The server tests run against.
pub fn admin_url() -> String {
    std::env::var("TEST_DATABASE_URL").unwrap_or_else(|_| DEFAULT_ADMIN_URL.to_owned())
}

/// A migrated database that is dropped when this value is.
pub struct TestDatabase {
    name: String,
    url: String,
    admin_url: String,
}

#[derive(QueryableByName)]
struct Found {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

impl TestDatabase {
    /// A fresh database holding `migrations` and nothing else.
    pub async fn new(migrations: Migrations) -> Self {
        let admin_url = admin_url();
        let template = ensure_template(&admin_url, migrations).await;
        let name = format!("test_{}_{}", migrations.name, uuid::Uuid::new_v4().simple());
        let clone = format!("TEMPLATE {}", quote_ident(&template));
        Self::create(admin_url, name, &clone).await
    }

    /// An empty database with no migrations (for tests of `migrate` itself).
    pub async fn empty(label: &str) -> Self {
        let name = format!("test_{label}_{}", uuid::Uuid::new_v4().simple());
        Self::create(admin_url(), name, "").await
    }

    /// `CREATE DATABASE name options`, and the handle that drops it.
    async fn create(admin_url: String, name: String, options: &str) -> Self {
        let mut admin = connect(&admin_url).await;
        // A clone is written through the WAL (8 MB, most of it the system catalogs), and with
        // synchronous_commit on, every test would also wait for that WAL to reach the disk:
        // half the CPU a clone costs on a busy two-core run. A test database that a server crash
        // loses is of no use anyway; the tests' own connections keep the server's setting.
        sql_query("SET synchronous_commit = off")
            .execute(&mut admin)
            .await
            .unwrap_or_else(|e| panic!("cannot set synchronous_commit for {name}: {e}"));
        sql_query(format!("CREATE DATABASE {} {options}", quote_ident(&name)))
            .execute(&mut admin)
            .await
            .unwrap_or_else(|e| panic!("cannot create {name} {options}: {e}"));
        let url = with_database(&admin_url, &name)
            .unwrap_or_else(|e| panic!("bad TEST_DATABASE_URL: {e}"));
        Self {
            name,
            url,
            admin_url,
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub async fn connect(&self) -> AsyncPgConnection {
        connect(&self.url).await
    }

    /// Runs SQL statements (a test's setup or its breakage) on a connection of their own.
    pub async fn execute(&self, statements: &str) {
        use diesel_async::SimpleAsyncConnection;
        self.connect()
            .await
            .batch_execute(statements)
            .await
            .unwrap_or_else(|e| panic!("{statements}: {e}"));
    }

    /// One number: `query` must select a single `bigint` named `n`
    /// (`SELECT count(*) AS n FROM …`).
    pub async fn count(&self, query: &str) -> i64 {
        sql_query(query)
            .get_result::<Found>(&mut self.connect().await)
            .await
            .unwrap_or_else(|e| panic!("{query}: {e}"))
            .n
    }

    /// The rows of `query` as one JSON array of objects (PostgreSQL's `json_agg`), in the
    /// query's order, for a test to read with its JSON library.
    pub async fn rows_json(&self, query: &str) -> String {
        #[derive(QueryableByName)]
        struct Rows {
            #[diesel(sql_type = Text)]
            rows: String,
        }
        let query = format!("SELECT COALESCE(json_agg(t), '[]')::text AS rows FROM ({query}) t");
        sql_query(&query)
            .get_result::<Rows>(&mut self.connect().await)
            .await
            .unwrap_or_else(|e| panic!("{query}: {e}"))
            .rows
    }

    /// The words a `TEXT` column's one-column `CHECK (column IN (...))` allows, sorted, for
    /// `column` written `table.column` (a [`crate::text_enum!`]'s `COLUMN`).
    pub async fn check_values(&self, column: &str) -> Vec<String> {
        #[derive(QueryableByName)]
        struct Definition {
            #[diesel(sql_type = Text)]
            definition: String,
        }
        let (table, name) = column
            .split_once('.')
            .unwrap_or_else(|| panic!("{column}: not table.column"));
        let found: Vec<Definition> = sql_query(
            "SELECT pg_get_constraintdef(c.oid) AS definition FROM pg_constraint c \
             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] \
             WHERE c.contype = 'c' AND c.conrelid = $1::regclass AND a.attname = $2 \
               AND cardinality(c.conkey) = 1",
        )
        .bind::<Text, _>(table)
        .bind::<Text, _>(name)
        .load(&mut self.connect().await)
        .await
        .unwrap_or_else(|e| panic!("{column}: {e}"));
        let [Definition { definition }] = found.as_slice() else {
            panic!(
                "{column}: expected one CHECK of its own, found {}",
                found.len()
            );
        };
        // `CHECK ((status = ANY (ARRAY['a'::text, 'b'::text])))`
        let mut words: Vec<String> = definition
            .split('\'')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect();
        words.sort();
        words
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // Drop runs outside any runtime we could borrow, so the cleanup gets its own thread
        // and runtime. FORCE ends connections the app under test still holds.
        let admin_url = self.admin_url.clone();
        let statement = format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            quote_ident(&self.name)
        );
        let handle = std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async move {
                if let Ok(mut admin) = AsyncPgConnection::establish(&admin_url).await {
                    let _ = sql_query(statement).execute(&mut admin).await;
                }
            });
        });
        let _ = handle.join();
    }
}

async fn connect(url: &str) -> AsyncPgConnection {
    AsyncPgConnection::establish(url).await.unwrap_or_else(|e| {
        panic!(
            "cannot connect to the test server {url}: {e} \
                 (is PostgreSQL running? `make test` finds or starts one)"
        )
    })
}

/// A hash of every file under the migrations folder, names and contents.
fn migrations_hash(dir: &Path) -> String {
    let mut files = Vec::new();
    collect_files(dir, &mut files);
    files.sort();
    let mut hasher = Sha256::new();
    for file in files {
        hasher.update(
            file.strip_prefix(dir)
                .unwrap_or(&file)
                .to_string_lossy()
                .as_bytes(),
        );
        hasher.update(std::fs::read(&file).unwrap_or_default());
    }
    hex::encode(hasher.finalize())[..16].to_owned()
}

fn collect_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        panic!("cannot read the migrations folder {}", dir.display());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Returns the name of a migrated template for `migrations`, building it if no test process
/// has yet.
async fn ensure_template(admin_url: &str, migrations: Migrations) -> String {
    let template = format!(
        "tmpl_{}_{}",
        migrations.name,
        migrations_hash(Path::new(migrations.source_dir))
    );
    let mut admin = connect(admin_url).await;
    sql_query("SELECT pg_advisory_lock(hashtext($1)::bigint)")
        .bind::<Text, _>(&template)
        .execute(&mut admin)
        .await
        .unwrap_or_else(|e| panic!("cannot lock the template {template}: {e}"));
    let exists = sql_query("SELECT count(*) AS n FROM pg_database WHERE datname = $1")
        .bind::<Text, _>(&template)
        .get_result::<Found>(&mut admin)
        .await
        .map(|f| f.n > 0)
        .unwrap_or(false);
    if !exists {
        // Build under another name and rename at the end, so a half-built template left by
        // a crash is never used.
        let building = format!("{template}_building");
        for statement in [
            format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                quote_ident(&building)
            ),
            format!("CREATE DATABASE {}", quote_ident(&building)),
        ] {
            sql_query(statement)
                .execute(&mut admin)
                .await
                .unwrap_or_else(|e| panic!("cannot prepare template {building}: {e}"));
        }
        let building_url = with_database(admin_url, &building)
            .unwrap_or_else(|e| panic!("bad TEST_DATABASE_URL: {e}"));
        run_migrations(&crate::PoolSettings::one_off(building_url), migrations)
            .await
            .unwrap_or_else(|e| panic!("cannot migrate template {building}: {e}"));
        sql_query(format!(
            "ALTER DATABASE {} RENAME TO {}",
            quote_ident(&building),
            quote_ident(&template)
        ))
        .execute(&mut admin)
        .await
        .unwrap_or_else(|e| panic!("cannot publish template {template}: {e}"));
    }
    let _ = sql_query("SELECT pg_advisory_unlock(hashtext($1)::bigint)")
        .bind::<Text, _>(&template)
        .execute(&mut admin)
        .await;
    template
}
