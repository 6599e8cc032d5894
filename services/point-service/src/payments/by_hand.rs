//! What the two lists a person settles by hand at the payment service have in common
//! (`point-service unsynced-orders`, `point-service unapplied-captures`): without `--resolve`
//! the command prints the open rows; `--resolve <id> --note <text>` marks one done, and the
//! note is required, so the list keeps what was done about each row.

use std::fmt::Display;

use diesel::QueryResult;
use diesel_async::AsyncPgConnection;

/// `--resolve <id> --note <text>`: marks the open row `id` done with the trimmed note through
/// `mark` (which answers whether there was one). `missing_note` is the error without a note,
/// and says what it should hold; `not_open` begins the error when no open row is `id`.
pub async fn resolve<Id: Display + Copy>(
    conn: &mut AsyncPgConnection,
    id: Id,
    note: Option<&str>,
    missing_note: &str,
    not_open: &str,
    mark: impl AsyncFnOnce(&mut AsyncPgConnection, Id, &str) -> QueryResult<bool>,
) -> Result<(), String> {
    let note = note
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .ok_or(missing_note)?;
    if mark(conn, id, note).await.map_err(|e| e.to_string())? {
        println!("resolved {id}: {note}");
        Ok(())
    } else {
        Err(format!("{not_open} {id}"))
    }
}

/// The open rows: `header`, a line each, then how many are open.
pub fn print_open<Row>(header: &str, open: &[Row], line: impl Fn(&Row) -> String) {
    println!("{header}");
    for row in open {
        println!("{}", line(row));
    }
    println!("{} open", open.len());
}
