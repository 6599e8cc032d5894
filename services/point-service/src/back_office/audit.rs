//! The back office's audit trail (`back_office_audit` of the points database), written and
//! read as `back_office::audit` does it for every service that keeps loyalty data.

pub use ::back_office::audit::{page, record, snapshot};
