//! What every service's fixture loader shares: reading a section row by row, and writing
//! each row under a savepoint. A bad row is reported (section, index, id, field, why) and
//! skipped; it never takes the valid rows of the file down with it (`docs/decisions.md`,
//! "Fixtures").

use std::fmt;

use diesel::QueryResult;
use diesel::result::Error as DbError;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Exit code of `seed` when the valid rows were loaded and some rows were rejected.
pub const EXIT_ROWS_REJECTED: u8 = 3;

/// What a service's fixture loader returns (`crate::SeedFn`).
pub type SeedFuture<'c> = BoxFuture<'c, anyhow::Result<SeedReport>>;

/// What a loader did: one line per section for the log, and the rows it refused.
#[derive(Debug, Default)]
pub struct SeedReport {
    pub lines: Vec<String>,
    pub rejected: Vec<Rejected>,
}

impl SeedReport {
    pub fn line(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }

    /// Refuses a row (or a whole section when `at` names no row).
    pub fn reject(&mut self, at: &Row, field: Option<&str>, why: impl Into<String>) {
        self.rejected.push(Rejected {
            row: at.to_string(),
            field: field.map(str::to_owned),
            why: why.into(),
        });
    }
}

/// A refused row: `point_offers[2] (id 64b7…): point_amount: must be positive, got -5`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    pub row: String,
    pub field: Option<String>,
    pub why: String,
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{}: {field}: {}", self.row, self.why),
            None => write!(f, "{}: {}", self.row, self.why),
        }
    }
}

/// Where a row is in the file: its section, its index in the list, its id when it has one.
#[derive(Debug, Clone)]
pub struct Row {
    pub section: &'static str,
    pub index: Option<usize>,
    pub id: Option<String>,
}

impl Row {
    /// The section as a whole (a section that is not a list, a single-object section).
    pub fn section(section: &'static str) -> Self {
        Self {
            section,
            index: None,
            id: None,
        }
    }
}

impl fmt::Display for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.section)?;
        if let Some(index) = self.index {
            write!(f, "[{index}]")?;
        }
        if let Some(id) = &self.id {
            write!(f, " ({id})")?;
        }
        Ok(())
    }
}

/// The rows of a list section that read as `T`; each other row is reported, naming the
/// field that failed. An absent or `null` section has no rows; a section that is not a list
/// is reported as a whole. `id_key` names the key that identifies a row in the report.
pub fn rows<T: DeserializeOwned>(
    fixture: &Value,
    section: &'static str,
    id_key: &str,
    report: &mut SeedReport,
) -> Vec<(Row, T)> {
    let items = match fixture.get(section) {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => items,
        Some(other) => {
            report.reject(
                &Row::section(section),
                None,
                format!("expected a list of rows, got {}", kind(other)),
            );
            return Vec::new();
        }
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(index, item)| {
            let at = Row {
                section,
                index: Some(index),
                id: item.get(id_key).and_then(|id| match id {
                    Value::String(s) => Some(format!("{id_key} {s}")),
                    Value::Number(n) => Some(format!("{id_key} {n}")),
                    _ => None,
                }),
            };
            match read::<T>(item) {
                Ok(row) => Some((at, row)),
                Err((field, why)) => {
                    report.reject(&at, field.as_deref(), why);
                    None
                }
            }
        })
        .collect()
}

/// Reads one value as `T`; on failure, the path of the field that failed (none when the
/// value itself is wrong) and why.
pub fn read<T: DeserializeOwned>(value: &Value) -> Result<T, (Option<String>, String)> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let field = (path != ".").then_some(path);
        (field, e.into_inner().to_string())
    })
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A rule serde cannot see that a row breaks: the field and why.
pub type Broken = (&'static str, String);

/// A list section of a fixture whose rows are upserted one by one ([`upsert_rows`]): its
/// name, the key that names a row in the report, and the rule its rows must pass beyond
/// their types.
pub struct Section<T> {
    name: &'static str,
    id_key: &'static str,
    check: fn(&T) -> Result<(), Broken>,
}

impl<T> Section<T> {
    pub const fn new(
        name: &'static str,
        id_key: &'static str,
        check: fn(&T) -> Result<(), Broken>,
    ) -> Self {
        Self {
            name,
            id_key,
            check,
        }
    }

    /// A section whose rows have no rule beyond their types and the database's constraints.
    pub const fn unchecked(name: &'static str, id_key: &'static str) -> Self {
        Self::new(name, id_key, |_| Ok(()))
    }
}

/// Writes one row in a savepoint of the loader's transaction (diesel-async nests a
/// transaction as a savepoint): its writes stay when they succeed; a row the database
/// refuses (a constraint, a value out of range) is rolled back and reported, and the load
/// goes on (`None`). Any other failure (the connection) ends the load.
pub async fn write<T: Send>(
    conn: &mut AsyncPgConnection,
    report: &mut SeedReport,
    at: &Row,
    write: impl for<'c> FnOnce(&'c mut AsyncPgConnection) -> BoxFuture<'c, QueryResult<T>> + Send,
) -> anyhow::Result<Option<T>> {
    match conn.transaction(async |conn| write(conn).await).await {
        Ok(value) => Ok(Some(value)),
        Err(DbError::DatabaseError(_, info)) => {
            let why = match info.constraint_name() {
                Some(constraint) => {
                    format!("refused by the database ({constraint}): {}", info.message())
                }
                None => format!("refused by the database: {}", info.message()),
            };
            report.reject(at, info.column_name(), why);
            Ok(None)
        }
        Err(other) => Err(other.into()),
    }
}

/// Loads a list section row by row: each row that reads as `T` and passes the section's
/// check is written by `upsert` ([`write`]); the others are reported. The report gets one
/// line, `name: N upserted` (`N of M` when some rows were refused).
pub async fn upsert_rows<T: DeserializeOwned + Sync>(
    conn: &mut AsyncPgConnection,
    fixture: &Value,
    report: &mut SeedReport,
    section: Section<T>,
    upsert: impl for<'c, 'r> Fn(&'c mut AsyncPgConnection, &'r T) -> BoxFuture<'c, QueryResult<usize>>
    + Sync,
) -> anyhow::Result<()> {
    let Section {
        name,
        id_key,
        check,
    } = section;
    let mut upserted = 0;
    for (at, row) in &rows::<T>(fixture, name, id_key, report) {
        if let Err((field, why)) = check(row) {
            report.reject(at, Some(field), why);
            continue;
        }
        let written = write(conn, report, at, |conn| upsert(conn, row)).await?;
        upserted += usize::from(written.is_some());
    }
    let total = fixture
        .get(name)
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    report.line(if upserted == total {
        format!("{name}: {upserted} upserted")
    } else {
        format!("{name}: {upserted} of {total} upserted")
    });
    Ok(())
}

/// `upsert!(conn, table, values, key, changes)`: `INSERT INTO table values ON CONFLICT
/// (key) DO UPDATE SET changes` on `conn`, how a loader writes a row that has a key, so that
/// a second load of the same fixture changes nothing. Expands to the statement's future
/// (the `upsert` of [`upsert_rows`], the `write` of [`write`]).
#[macro_export]
macro_rules! upsert {
    ($conn:expr, $table:expr, $values:expr, $key:expr, $changes:expr $(,)?) => {
        $crate::seed::diesel_async::RunQueryDsl::execute(
            $crate::seed::diesel::insert_into($table)
                .values($values)
                .on_conflict($key)
                .do_update()
                .set($changes),
            $conn,
        )
    };
}

#[doc(hidden)]
pub use {diesel, diesel_async};

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Thing {
        id: i64,
        size: u8,
    }

    #[test]
    fn a_bad_row_is_reported_by_index_id_and_field_and_the_others_are_kept() {
        let mut report = SeedReport::default();
        let fixture = json!({"things": [
            {"id": 1, "size": 3},
            {"id": 2, "size": "big"},
            {"size": 4},
            {"id": 4, "size": 5}
        ]});
        let kept: Vec<i64> = rows::<Thing>(&fixture, "things", "id", &mut report)
            .into_iter()
            .map(|(_, t)| t.id)
            .collect();
        assert_eq!(kept, [1, 4]);
        let rejected: Vec<String> = report.rejected.iter().map(ToString::to_string).collect();
        assert_eq!(rejected.len(), 2, "{rejected:?}");
        assert!(
            rejected[0].starts_with("things[1] (id 2): size: invalid type: string \"big\""),
            "{rejected:?}"
        );
        assert_eq!(rejected[1], "things[2]: missing field `id`");
    }

    #[test]
    fn a_section_that_is_not_a_list_is_reported_whole() {
        let mut report = SeedReport::default();
        assert!(rows::<Thing>(&json!({"things": 5}), "things", "id", &mut report).is_empty());
        assert!(rows::<Thing>(&json!({"things": null}), "things", "id", &mut report).is_empty());
        assert!(rows::<Thing>(&json!({}), "things", "id", &mut report).is_empty());
        assert_eq!(
            report.rejected[0].to_string(),
            "things: expected a list of rows, got a number"
        );
        assert_eq!(report.rejected.len(), 1);
    }
}
