//! The clock of a login code's times: when it was stored and sent, and until when it lives.
//!
//! In the service it is the database's (`now()`, the start of the request's transaction): the
//! one clock every replica shares, so a code stored through one replica and tried on another
//! lives exactly its 3 minutes whatever the replicas' own clocks say. Tests set a manual one,
//! to try a code at the last instant of its life and at its end.

use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Utc};

#[derive(Debug, Clone, Default)]
pub enum Clock {
    /// The database's `now()`.
    #[default]
    Database,
    /// A test's clock: stands where the test last set it.
    Manual(ManualClock),
}

impl Clock {
    /// The manual clock's time; `None` for the database's, which only the database reads.
    pub fn fixed(&self) -> Option<DateTime<Utc>> {
        match self {
            Self::Database => None,
            Self::Manual(clock) => Some(clock.now()),
        }
    }
}

/// A clock that stands still until it is set, shared by every clone.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<Mutex<DateTime<Utc>>>);

impl ManualClock {
    /// A clock standing at `at`.
    pub fn new(at: DateTime<Utc>) -> Self {
        Self(Arc::new(Mutex::new(at)))
    }

    pub fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Moves the clock (and every clone of it) to `to`.
    pub fn set(&self, to: DateTime<Utc>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = to;
    }
}
