//! How a service's error enum takes the database's failures: one macro, so that every
//! service tells busy (503) from broken (500) by the same rule ([`crate::Failure`]).

/// Implements `From<db::Failure>`, `From<diesel::result::Error>` and `From<db::PoolError>`
/// for a service's error enum: [`crate::Failure::Busy`] becomes its `Busy(String)` variant
/// and [`crate::Failure::Broken`] its `Internal(String)` variant, each with the raw text
/// (for the log; the answer carries the service's own message).
#[macro_export]
macro_rules! from_failure {
    ($error:ty) => {
        impl From<$crate::Failure> for $error {
            fn from(failure: $crate::Failure) -> Self {
                match failure {
                    $crate::Failure::Busy(raw) => Self::Busy(raw),
                    $crate::Failure::Broken(raw) => Self::Internal(raw),
                }
            }
        }

        impl From<$crate::DieselError> for $error {
            fn from(e: $crate::DieselError) -> Self {
                $crate::Failure::from(e).into()
            }
        }

        impl From<$crate::PoolError> for $error {
            fn from(e: $crate::PoolError) -> Self {
                $crate::Failure::from(e).into()
            }
        }
    };
}
