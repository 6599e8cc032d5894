//! The `catalog` database that the order service reads and the operator service writes:
//! its migrations, its diesel schema and its row types, in one place so the two services
//! can never disagree about it.

mod redemption;
pub mod schema;
mod service_row;

pub use redemption::RedemptionStatus;
pub use service_row::ServiceRow;

use diesel_migrations::{EmbeddedMigrations, embed_migrations};

static EMBEDDED: EmbeddedMigrations = embed_migrations!("../../migrations/catalog");

/// The catalog database's migrations.
pub const MIGRATIONS: db::Migrations = db::Migrations {
    name: "catalog",
    embedded: &EMBEDDED,
    source_dir: concat!(env!("CARGO_MANIFEST_DIR"), "/../../migrations/catalog"),
};

/// The message of a service id the catalog does not hold: the operator service's 404
/// (its envelope) and the order service's system-category routes' (envelope C) say it alike.
pub const SERVICE_NOT_FOUND: &str = "Service is not found";
