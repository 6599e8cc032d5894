//! What a database error means for the caller: busy, try again (503), or a bug or an outage
//! (500: the spec's point routes answer 401/500/502/504 only, and a database that is down
//! is its "unexpected failure in the point service").
//!
//! diesel names only some SQLSTATEs (40001 is `SerializationFailure`); diesel-async keeps the
//! server's error, code included, behind a private wrapper that exposes only its message.
//! So the other retryable codes are told by PostgreSQL's own message for each (the server
//! writes them in English unless `lc_messages` says otherwise; a translated message makes
//! the error a 500, never a wrong 503).

use crate::PoolError;

/// What every service answers a [`Failure::Busy`] with (503, in its envelope).
pub const BUSY_MESSAGE: &str = "The service is busy, try again";

/// The 503 of a [`Failure::Busy`] as the services' documents describe it.
pub const BUSY_ANSWER: &str = "`The service is busy, try again`: the database pool is exhausted, or a deadlock or lock timeout";

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

/// The SQLSTATE of a retryable server error, from its message.
fn retryable_code(message: &str) -> Option<&'static str> {
    RETRYABLE_MESSAGES
        .iter()
        .find(|(_, start)| message.starts_with(start))
        .map(|(code, _)| *code)
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
}
