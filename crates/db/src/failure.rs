//! What a database error means for the caller: try again (503), or a bug or outage (500).

use crate::PoolError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Pool exhausted past its wait, deadlock, lock timeout, serialization failure: the
    /// same request may well succeed a moment later.
    Busy(String),
    /// Anything else.
    Broken(String),
}

impl From<diesel::result::Error> for Failure {
    fn from(e: diesel::result::Error) -> Self {
        use diesel::result::{DatabaseErrorKind, Error};
        match &e {
            Error::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => {
                Self::Busy(e.to_string())
            }
            // 40P01 deadlock and 55P03 lock timeout have no kind of their own in diesel.
            Error::DatabaseError(_, info)
                if info.message().contains("deadlock")
                    || info.message().contains("lock timeout") =>
            {
                Self::Busy(e.to_string())
            }
            _ => Self::Broken(format!("database error: {e}")),
        }
    }
}

impl From<PoolError> for Failure {
    fn from(e: PoolError) -> Self {
        match e {
            PoolError::Timeout(_) => Self::Busy(e.to_string()),
            other => Self::Broken(format!("no database connection: {other}")),
        }
    }
}
