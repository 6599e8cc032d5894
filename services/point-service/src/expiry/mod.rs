//! Points expiry: the rule that dates a client's points (`rule`, which the balance answers),
//! the job that takes them once the date has passed (`job`, `point-service expire-points`)
//! the report of the clients whose points expire soon (`report`, `point-service expiring`)
//! and what the next run would take under another policy (`preview`, the back office's dry
//! run), and the "expiring soon" events the job sends before a date (`notices`).

pub mod job;
pub mod notices;
pub mod preview;
pub mod report;
pub mod rule;
