//! Card payments of point orders: each pay call's attempt, the payment state machine that
//! decides what a capture or a decline does, the payment webhook, the sync that reads
//! payments back from the payment service, the captures that took money without points,
//! and the payment service's client. No HTTP in here but the client's own calls.

pub mod attempts;
pub mod by_hand;
pub mod client;
pub mod machine;
pub mod sync;
pub mod unapplied;
pub mod webhook;
