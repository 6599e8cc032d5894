//! The order service over real HTTP against a real database of its own, with real HTTP
//! servers playing the auth service and the point service.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

mod back_office;
mod gift_cards;
mod helpers;
mod housekeeping;
mod openapi;
mod point_rates;
mod relay;
mod relay_answers;
mod relay_connections;
mod relay_targets;
mod relay_timeouts;
mod seed;
mod states;
mod stores;
mod system_categories;
mod upstream;
