//! The `points` database: its migrations and diesel schema.

pub mod schema;

use diesel_migrations::{EmbeddedMigrations, embed_migrations};

static EMBEDDED: EmbeddedMigrations = embed_migrations!("../../migrations/points");

pub const MIGRATIONS: ::db::Migrations = ::db::Migrations {
    name: "points",
    embedded: &EMBEDDED,
    source_dir: concat!(env!("CARGO_MANIFEST_DIR"), "/../../migrations/points"),
};
