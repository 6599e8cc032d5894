//! One tracing span per SQL statement, so a trace shows each query under the request that
//! ran it (and, exported over OTLP, as a client span of PostgreSQL). The statement text is
//! recorded without its bind values: those can be phone numbers, token hashes or amounts.

use std::collections::VecDeque;

use diesel::connection::{Instrumentation, InstrumentationEvent};
use tracing::field::Empty;

/// The longest statement text kept on a span.
const MAX_STATEMENT: usize = 2000;

/// Installed on every pooled connection. Statements on one connection finish in the order
/// they started (PostgreSQL answers a connection's queries in order), so open spans are a
/// queue.
#[derive(Default)]
pub struct SqlSpans {
    open: VecDeque<tracing::Span>,
}

impl Instrumentation for SqlSpans {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        match event {
            InstrumentationEvent::StartQuery { query, .. } => {
                let span = tracing::info_span!(
                    "db.query",
                    otel.name = Empty,
                    otel.kind = "client",
                    otel.status_code = Empty,
                    db.system = "postgresql",
                    db.statement = Empty,
                    error.message = Empty,
                );
                // Formatting the query costs something; skip it when nobody listens.
                if !span.is_disabled() {
                    let statement = without_binds(&query.to_string());
                    span.record("otel.name", operation(&statement));
                    span.record("db.statement", statement);
                }
                self.open.push_back(span);
            }
            InstrumentationEvent::FinishQuery { error, .. } => {
                if let Some(span) = self.open.pop_front()
                    && let Some(error) = error
                {
                    span.record("otel.status_code", "ERROR");
                    span.record("error.message", tracing::field::display(error));
                }
                // Dropping the span ends it.
            }
            _ => {}
        }
    }
}

/// diesel's debug text is `<sql> -- binds: [...]`; keep the SQL only.
fn without_binds(text: &str) -> String {
    let sql = text
        .split_once(" -- binds:")
        .map_or(text, |(sql, _)| sql)
        .trim();
    let mut end = sql.len().min(MAX_STATEMENT);
    while !sql.is_char_boundary(end) {
        end -= 1;
    }
    sql[..end].to_owned()
}

/// The span's name: the statement's first keyword (`SELECT`, `INSERT`, …).
fn operation(statement: &str) -> String {
    statement
        .split_whitespace()
        .next()
        .unwrap_or("SQL")
        .to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_values_never_reach_the_span() {
        let text = "SELECT \"clients\".\"id\" FROM \"clients\" WHERE \"phone\" = $1 -- binds: [\"+966500000001\"]";
        let statement = without_binds(text);
        assert_eq!(
            statement,
            "SELECT \"clients\".\"id\" FROM \"clients\" WHERE \"phone\" = $1"
        );
        assert_eq!(operation(&statement), "SELECT");
        assert_eq!(operation("insert into x values (1)"), "INSERT");
    }

    #[test]
    fn long_statements_are_cut_on_a_character_boundary() {
        let long = "é".repeat(MAX_STATEMENT);
        assert!(without_binds(&long).len() <= MAX_STATEMENT);
    }
}
