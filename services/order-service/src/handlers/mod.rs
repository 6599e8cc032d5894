//! The order service's own routes (the relayed ones are in `relay.rs`).

pub mod catalog;
pub mod gift_cards;
pub mod stores;

/// `{data: [...]}`: a list that is never paginated, with no metadata block.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Listed<T: serde::Serialize> {
    pub data: Vec<T>,
}
