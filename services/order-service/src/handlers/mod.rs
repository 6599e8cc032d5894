//! The order service's own routes (the relayed ones are in `relay.rs`).

pub mod catalog;
pub mod gift_cards;
pub mod stores;
