//! The loyalty back office over the catalog (docs/decisions.md, "The loyalty back office"):
//! gift-code batches and the earn-rate table, which this service keeps. The operator service
//! relays its operator routes here once it has checked the operator's token and role; each
//! change is made with its audit row (`back_office::audit`) in one transaction.

pub mod earn_rates;
pub mod gift_code_export;
pub mod gift_codes;
