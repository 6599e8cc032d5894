//! The `auth` database: its migrations and diesel schema.

pub mod schema;

use diesel_migrations::{EmbeddedMigrations, embed_migrations};

static MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/auth");

pub const SCHEMA: ::db::Schema = ::db::Schema {
    name: "auth",
    migrations: &MIGRATIONS,
    source_dir: concat!(env!("CARGO_MANIFEST_DIR"), "/../../migrations/auth"),
};
