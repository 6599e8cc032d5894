//! Points expiry: the rule that dates a client's points (`rule`, which the balance answers),
//! the job that takes them once the date has passed (`job`, `point-service expire-points`)
//! and the report of the clients whose points expire soon (`report`, `point-service
//! expiring`).

pub mod job;
pub mod report;
pub mod rule;
