//! What a database error means for the caller: busy, try again (503), or a bug or an outage
//! (500: the spec's point routes answer 401/500/502/504 only, and a database that is down
//! is its "unexpected failure in the point service").
//!
//! diesel names only some SQLSTATEs (40001 is `SerializationFailure`); diesel-async keeps the
//! server's error, code included, behind a private wrapper that exposes only its message.
//! So the other retryable codes are told by PostgreSQL's own message for each (the server
//! writes them in English unless `lc_messages` says otherwise; a translated message makes
//! the error a 500, never a wrong 503).
//!
//! PgBouncer answers its own errors with SQLSTATE 08P01 and a fixed text, then closes the
//! connection. Those that mean "every server connection is taken, try again" are busy like
//! an exhausted pool of our own; those that mean the server behind it is down stay the
//! spec's 500, as the server's own outage does (`docs/decisions.md`, "Errors").

use crate::PoolError;

/// What every service answers a [`Failure::Busy`] with (503, in its envelope).
pub const BUSY_MESSAGE: &str = "The service is busy, try again";

/// The 503 of a [`Failure::Busy`] as the services' documents describe it.
pub const BUSY_ANSWER: &str = "`The service is busy, try again`: the database pool is exhausted, \
                                or a deadlock or lock timeout";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Pool exhausted past its wait, a deadlock, a lock or statement timeout, a
    /// serialization failure: the database is up but contended, and the same request may
    /// well succeed a moment later.
    Busy(String),
    /// Anything else.
    Broken(String),
}

/// The start of PostgreSQL's message for each retryable SQLSTATE diesel has no kind for.
const RETRYABLE_MESSAGES: &[(&str, &str)] = &[
    ("40P01", "deadlock detected"),
    ("55P03", "canceling statement due to lock timeout"),
    ("55P03", "could not obtain lock on "),
    ("57014", "canceling statement due to statement timeout"),
    ("57014", "canceling statement due to user request"),
];

/// PgBouncer 1.18's errors (08P01) for a client it cannot serve because its pool is full
/// (`src/janitor.c`, `pool_client_maint`; `src/client.c`): a query queued for a server
/// connection past `query_wait_timeout`, a query past `query_timeout`, a client past
/// `max_client_conn`. Not here, and so a 500: "server login has been failing, try again
/// later (server_login_retry)" and "client_login_timeout (server down)", PgBouncer saying
/// that PostgreSQL itself is down.
const POOLER_BUSY_MESSAGES: &[&str] = &[
    "query_wait_timeout",
    "query_timeout",
    "no more connections allowed (max_client_conn)",
];

/// The SQLSTATE of a retryable server error, from its message.
fn retryable_code(message: &str) -> Option<&'static str> {
    RETRYABLE_MESSAGES
        .iter()
        .find(|(_, start)| message.starts_with(start))
        .map(|(code, _)| *code)
        .or_else(|| POOLER_BUSY_MESSAGES.contains(&message).then_some("08P01"))
}

impl From<diesel::result::Error> for Failure {
    fn from(e: diesel::result::Error) -> Self {
        use diesel::result::{DatabaseErrorKind, Error};
        match &e {
            Error::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => {
                Self::Busy(e.to_string())
            }
            Error::DatabaseError(_, info) if retryable_code(info.message()).is_some() => {
                Self::Busy(e.to_string())
            }
            _ => Self::Broken(format!("database error: {e}")),
        }
    }
}

impl From<PoolError> for Failure {
    fn from(e: PoolError) -> Self {
        match e {
            // Every connection busy past the pool's wait.
            PoolError::Timeout(_) => Self::Busy(format!("no database connection: {e}")),
            // A new connection's start was refused by the server or the pooler: busy or
            // not by the server's own words (a pooler's queue wait runs out here when the
            // session setup waits for a server connection).
            PoolError::Backend(diesel_async::pooled_connection::PoolError::ConnectionError(
                diesel::ConnectionError::CouldntSetupConfiguration(e),
            )) => match Self::from(e) {
                Self::Busy(why) => Self::Busy(format!("no database connection: {why}")),
                Self::Broken(why) => Self::Broken(format!("no database connection: {why}")),
            },
            // None can be opened (the database is down or refuses), or a new one failed its
            // session setup: an outage, the spec's 500.
            PoolError::Backend(_)
            | PoolError::PostCreateHook(_)
            | PoolError::Closed
            | PoolError::NoRuntimeSpecified => Self::Broken(format!("no database connection: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use diesel::result::{DatabaseErrorKind, Error};

    use super::*;

    fn server_error(kind: DatabaseErrorKind, message: &str) -> Failure {
        Failure::from(Error::DatabaseError(kind, Box::new(message.to_owned())))
    }

    fn is_busy(failure: &Failure) -> bool {
        matches!(failure, Failure::Busy(_))
    }

    #[test]
    fn retryable_server_errors_are_busy() {
        for message in [
            "deadlock detected",
            "canceling statement due to lock timeout",
            "could not obtain lock on row in relation \"gift_card_redemptions\"",
            "canceling statement due to statement timeout",
            // PgBouncer with every server connection taken.
            "query_wait_timeout",
            "no more connections allowed (max_client_conn)",
        ] {
            assert!(
                is_busy(&server_error(DatabaseErrorKind::Unknown, message)),
                "{message}"
            );
        }
        assert!(is_busy(&server_error(
            DatabaseErrorKind::SerializationFailure,
            "x"
        )));
    }

    #[test]
    fn other_errors_are_broken() {
        for (kind, message) in [
            (DatabaseErrorKind::UniqueViolation, "duplicate key value"),
            (DatabaseErrorKind::CheckViolation, "new row violates check"),
            (DatabaseErrorKind::Unknown, "column \"x\" does not exist"),
            // An outage is the spec's 500, not a 503.
            (
                DatabaseErrorKind::ClosedConnection,
                "server closed the connection",
            ),
            (DatabaseErrorKind::UnableToSendCommand, "broken pipe"),
            (
                DatabaseErrorKind::Unknown,
                "terminating connection due to administrator command",
            ),
            (
                DatabaseErrorKind::Unknown,
                "the database system is starting up",
            ),
            // PgBouncer saying the server behind it is down: an outage, like the server's own.
            (
                DatabaseErrorKind::Unknown,
                "server login has been failing, try again later (server_login_retry)",
            ),
            (
                DatabaseErrorKind::Unknown,
                "client_login_timeout (server down)",
            ),
            // A pooler's text inside another message is not the pooler's error.
            (
                DatabaseErrorKind::Unknown,
                "relation \"query_wait_timeout\" does not exist",
            ),
            // Only the start of the message counts: a value that quotes it is no timeout.
            (
                DatabaseErrorKind::Unknown,
                "invalid input syntax: \"canceling statement due to statement timeout\"",
            ),
        ] {
            assert!(!is_busy(&server_error(kind, message)), "{kind:?} {message}");
        }
        assert!(!is_busy(&Failure::from(Error::NotFound)));
    }

    #[test]
    fn only_a_pool_wait_past_its_timeout_is_busy() {
        use deadpool::managed::TimeoutType;
        assert!(is_busy(&Failure::from(PoolError::Timeout(
            TimeoutType::Wait
        ))));
        assert!(!is_busy(&Failure::from(PoolError::Backend(
            diesel_async::pooled_connection::PoolError::ConnectionError(
                diesel::ConnectionError::BadConnection("connection refused".into())
            )
        ))));
        assert!(!is_busy(&Failure::from(PoolError::Closed)));
    }

    #[test]
    fn a_new_connection_refused_is_busy_or_not_by_the_refusal() {
        use diesel::ConnectionError::CouldntSetupConfiguration;
        use diesel_async::pooled_connection::PoolError::ConnectionError;
        let refused = |message: &str| {
            Failure::from(PoolError::Backend(ConnectionError(
                CouldntSetupConfiguration(Error::DatabaseError(
                    DatabaseErrorKind::Unknown,
                    Box::new(message.to_owned()),
                )),
            )))
        };
        assert!(is_busy(&refused("query_wait_timeout")));
        assert!(!is_busy(&refused("the database system is starting up")));
        assert!(!is_busy(&refused(
            "server login has been failing, try again later (server_login_retry)"
        )));
    }
}
