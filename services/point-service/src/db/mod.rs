//! The `points` database: its migrations and diesel schema.

pub mod schema;

use diesel_migrations::{EmbeddedMigrations, embed_migrations};

static MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/points");

pub const SCHEMA: ::db::Schema = ::db::Schema {
    name: "points",
    migrations: &MIGRATIONS,
    source_dir: concat!(env!("CARGO_MANIFEST_DIR"), "/../../migrations/points"),
};
