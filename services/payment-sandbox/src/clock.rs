//! The sandbox's clock for the times it records (`updated_at`, `captured_at`). The system
//! clock in the binary; tests set a manual one to capture payments on a day of their choosing.
//! Webhook signatures always use the system clock: the point service checks them against its
//! own.

use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Utc};

#[derive(Debug, Clone, Default)]
pub enum Clock {
    #[default]
    System,
    /// Stands at the time last set, shared by every clone.
    Manual(Arc<Mutex<DateTime<Utc>>>),
}

impl Clock {
    /// A manual clock standing at `at`.
    pub fn manual(at: DateTime<Utc>) -> Self {
        Self::Manual(Arc::new(Mutex::new(at)))
    }

    pub fn now(&self) -> DateTime<Utc> {
        match self {
            Self::System => Utc::now(),
            Self::Manual(at) => *at.lock().unwrap_or_else(PoisonError::into_inner),
        }
    }

    /// Moves a manual clock to `to`; the system clock cannot be moved, so it ignores this.
    pub fn set(&self, to: DateTime<Utc>) {
        if let Self::Manual(at) = self {
            *at.lock().unwrap_or_else(PoisonError::into_inner) = to;
        }
    }
}
