//! Fixtures loaded as `<binary> seed FILE` loads them: one service's loader, in one
//! transaction.

use db::testing::TestDatabase;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use serde_json::Value;
use server::{SeedFn, SeedReport};

/// Loads `fixture` with a service's loader (its `seed::load`); the report.
pub async fn load(
    conn: &mut AsyncPgConnection,
    loader: SeedFn,
    fixture: &Value,
) -> anyhow::Result<SeedReport> {
    conn.transaction::<_, anyhow::Error, _>(async |c| loader(c, fixture).await)
        .await
}

/// A load whose every row must be accepted (else the test fails naming the rejected ones);
/// its log lines.
pub async fn load_all(
    conn: &mut AsyncPgConnection,
    loader: SeedFn,
    fixture: &Value,
) -> anyhow::Result<Vec<String>> {
    let report = load(conn, loader, fixture).await?;
    assert!(report.rejected.is_empty(), "{:?}", report.rejected);
    Ok(report.lines)
}

/// A service's loader (its `seed::load`), as a test module names it once:
/// `const SEED: Seeder = Seeder(seed::load);`.
pub struct Seeder(pub SeedFn);

impl Seeder {
    /// A load whose every row must be accepted; its log lines ([`load_all`]).
    pub async fn all(
        &self,
        conn: &mut AsyncPgConnection,
        fixture: &Value,
    ) -> anyhow::Result<Vec<String>> {
        load_all(conn, self.0, fixture).await
    }

    /// A load and its report, rows refused included ([`load`]).
    pub async fn report(
        &self,
        conn: &mut AsyncPgConnection,
        fixture: &Value,
    ) -> anyhow::Result<SeedReport> {
        load(conn, self.0, fixture).await
    }
}

/// A test database with `migrations` and `fixture` loaded, every row accepted.
pub async fn seeded_database(
    migrations: db::Migrations,
    loader: SeedFn,
    fixture: &Value,
) -> TestDatabase {
    let database = TestDatabase::new(migrations).await;
    load_all(&mut database.connect().await, loader, fixture)
        .await
        .unwrap();
    database
}
