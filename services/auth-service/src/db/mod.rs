//! The `auth` database: its migrations and diesel schema.

pub mod schema;

use diesel_migrations::{EmbeddedMigrations, embed_migrations};

static EMBEDDED: EmbeddedMigrations = embed_migrations!("../../migrations/auth");

pub const MIGRATIONS: ::db::Migrations = ::db::Migrations {
    name: "auth",
    embedded: &EMBEDDED,
    source_dir: concat!(env!("CARGO_MANIFEST_DIR"), "/../../migrations/auth"),
};
