//! The order service's own routes (the relayed ones are in `relay.rs`).

pub mod back_office;
pub mod gift_cards;
pub mod point_rates;
pub mod stores;
pub mod system_categories;

/// A raw body as JSON; unreadable is null, which each body rule refuses in its words.
fn json_body(raw: &[u8]) -> serde_json::Value {
    serde_json::from_slice(raw).unwrap_or(serde_json::Value::Null)
}

/// `{data: [...]}`: a list that is never paginated, with no metadata block.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Listed<T: serde::Serialize> {
    pub data: Vec<T>,
}
