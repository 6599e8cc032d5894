//! The reports an operator or finance runs against the points database: the ledger's
//! invariants (`audit`), the points the programme owes (`liability`) and a day's settlement
//! at the payment service against the ledger's card credits (`reconcile`).

pub mod audit;
pub mod cross_check;
pub mod liability;
pub mod reconcile;
